"""`verify-pr local`: judge a working tree against its base before a PR exists."""
