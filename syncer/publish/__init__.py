"""The bot: events routed to the InferenceX PRs they concern, pins, the cookbook clone and PR,
and the status comments."""
