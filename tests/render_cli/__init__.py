"""The output formats through the installed `verify-pr` console script: terminal layout, partial verdicts."""
