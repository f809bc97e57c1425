#!/bin/sh
# A port behind a wrapper: the shell starts the real port as its child (no exec) and waits.
"$1" "$(dirname "$0")/child_hangs.py" "$2"
