#!/bin/sh
# Measures how long the sandbox CLI takes to start and finish, the figures the README gives:
#   java -jar samples/target/sandbox.jar --help
#   java -jar samples/target/sandbox.jar exec --provider local -- true
# and the same through scripts/sandbox (class-data archive, C1 only, serial GC), after one run that writes the archive.
# Uses hyperfine when installed (apt-get install hyperfine), else a loop of date +%s%N.
# Usage: scripts/cli-startup.sh [RUNS]   (build the jar first: mvn -B -q package -pl samples -am -DskipTests)
set -eu
root=$(dirname "$(readlink -f "$0")")/..
jar=$root/samples/target/sandbox.jar
runs=${1:-20}
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
[ -f "$jar" ] || { echo "no $jar: build it first" >&2; exit 2; }
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export SANDBOX_CACHE_DIR="$cache"
"$root/scripts/sandbox" exec --provider local -- true # writes the archive
"$java" -version 2>&1 | head -1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), cpus: $(nproc)"
set -- "$java -jar $jar --help" \
	"$java -jar $jar exec --provider local -- true" \
	"$root/scripts/sandbox --help" \
	"$root/scripts/sandbox exec --provider local -- true"
if command -v hyperfine >/dev/null; then
	hyperfine -N --warmup 3 --runs "$runs" --style basic "$@" 2>&1 | grep -E 'Benchmark|Time|Range'
	exit
fi
for command in "$@"; do
	total=0
	i=0
	while [ "$i" -lt "$runs" ]; do
		start=$(date +%s%N)
		$command >/dev/null
		total=$((total + $(date +%s%N) - start))
		i=$((i + 1))
	done
	echo "$command: mean $((total / runs / 1000000)) ms over $runs runs"
done
