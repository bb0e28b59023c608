"""The GitHub client: REST transport, rate limits, records of pulls, comments, issues and
Actions, webhook events, the plan of writes, and the offline stand-in of dry runs."""
