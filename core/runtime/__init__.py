"""Where work runs and how it is bounded: forked children under a deadline, pools, Ray, memos, regex checks."""
