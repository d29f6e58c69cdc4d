#!/usr/bin/env bash
# A shell `curl` loop, as a peer for `cardboard import`: one curl process per row, one after another.
# Usage: curl-loop.sh file.csv maxRows (env CARDBOARD_*). The bench CSV has no quotes, commas or
# backslashes inside fields, so `read` with IFS=, and printf build the JSON correctly.
set -euo pipefail
file=$1
max=$2
url="$CARDBOARD_BASE_URL/api/aptlet/$CARDBOARD_BOARD"
n=0
while IFS=, read -r name status owner priority; do
  if [ "$n" -ge "$max" ]; then break; fi
  body=$(printf '{"Name":"%s","Status":"%s","Owner":"%s","Priority":"%s"}' "$name" "$status" "$owner" "$priority")
  curl -sS -f -o /dev/null -X POST -H 'content-type: application/json' -H "x-token: $CARDBOARD_TOKEN" --data-binary "$body" "$url"
  n=$((n + 1))
done < <(tail -n +2 "$file")
echo "$n"
