"""Writing cookbook data modules: cells from renderings, compaction, encoding, edits in
place, emitting the JS text, and the page section."""
