"""The ``chunkscope`` command line: ``core.cli.main`` builds the parser; one module per group of subcommands."""
