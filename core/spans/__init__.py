"""Where a framework's chunk texts lie in the source: matching, recovery, and what a framework rewrote."""
