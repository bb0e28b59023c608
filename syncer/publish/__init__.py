"""Publishing: the cookbook checkout, GitHub API, and the bot that strings it together."""
