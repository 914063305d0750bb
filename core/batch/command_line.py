"""The ``chunkscope batch`` command line that applies a saved configuration to a corpus.

The app's Export page shows it beside the configuration download; it sits with the batch, below both
the page and the CLI that parses it, so the page never reaches into ``core.cli``.
"""

from __future__ import annotations

import shlex


def batch_commands(config_file: str, inputs: str = "DOCS/", out: str = "corpus_nodes/") -> dict[str, str]:
    """The ``chunkscope batch`` command line that applies a saved configuration to a corpus, per engine.

    ``config_file`` is the JSON that ``--config`` reads (the app's configuration download).
    """
    local = ["chunkscope", "batch", inputs, "--config", config_file, "--out", out]
    return {"local": shlex.join(local), "ray": shlex.join([*local, "--engine", "ray"])}
