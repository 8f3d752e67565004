"""verify-pr subcommands: one module per verb (NAME, HELP, add_arguments, run)."""
