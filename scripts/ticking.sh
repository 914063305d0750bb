#!/bin/sh
# Run a long command (pip installing ~160 packages) and, every 30 seconds while it runs, say that it still runs
# and how many packages .venv holds so far: pip prints nothing while it unpacks and installs what it downloaded.
# TICK_SECONDS sets the interval (the tests use 1).
every=${TICK_SECONDS:-30}
flag=$(mktemp)
(
	seconds=0
	while [ -e "$flag" ]; do
		sleep 1
		seconds=$((seconds + 1))
		if [ -e "$flag" ] && [ $((seconds % every)) -eq 0 ]; then
			count=$(ls -d .venv/lib/python3*/site-packages/*.dist-info 2>/dev/null | wc -l)
			printf '    ... still installing (%s s): %s packages in .venv so far\n' "$seconds" "$count"
		fi
	done
) &
"$@"
status=$?
rm -f "$flag"
wait
exit $status
