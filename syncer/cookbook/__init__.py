"""Reading cookbook data modules: the JS module text, its values, the decode the cookbook's own
decoder does, shell text, and the checks of a module's shape."""
