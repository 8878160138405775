# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Shared by the veth benches (bench-xsk, bench-threads, bench-e2e): their
# throwaway testbed, the TC counting sink (bench/progs/xo_bench_sink.bpf.c)
# on an interface of a namespace, reading offload-tool's JSON summary, and
# the median. Sourced; needs $root (the source tree) and $build (the build
# tree, where bpf/xo_bench_sink.bpf.o is).

# bench_testbed PREFIX [testbed up options]: a testbed named PREFIX<pid>
# and a scratch directory $tmp, both taken down on exit, with the receivers
# still in the background killed first (they would keep the namespace).
# The trap is set before either exists, so a Ctrl-C at any point takes down
# what was made. Sets the testbed's variables (XO_NS_A, ...); defines inA
# and inB (run a command in namespace A or B).
bench_testbed() {
	name=$1$$ tmp=
	shift
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
	tmp=$(mktemp -d)
	# eval of a failed command substitution would succeed on the empty string
	testbed=$("$root/tools/testbed" up --name "$name" "$@") || exit 1
	eval "$testbed"
	inA() { nsenter --net="/run/netns/$XO_NS_A" "$@"; }
	inB() { nsenter --net="/run/netns/$XO_NS_B" "$@"; }
}

bench_cleanup() {
	local p
	# a second signal (another Ctrl-C, or the group's copy of the first)
	# would run `exit` again and end the cleanup halfway
	trap '' INT TERM HUP
	for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	"$root/tools/testbed" down "$name" >/dev/null 2>&1 || true
	[[ -z $tmp ]] || rm -rf "${tmp:?}"
}

# wait_ready FILE PATTERN: waits (5 s at most) until a receiver's output
# shows it is in place, so the sender starts only then and set-up time is
# never counted as lost traffic. 1 on time-out.
wait_ready() {
	local i
	for ((i = 0; i < 500; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# median: of the numbers on stdin, one per line
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# sink_attach NS IF: clsact on IF, the sink on its ingress (direct action).
sink_attach() {
	nsenter --net="/run/netns/$1" tc qdisc add dev "$2" clsact
	nsenter --net="/run/netns/$1" tc filter add dev "$2" ingress bpf da obj "$build/bpf/xo_bench_sink.bpf.o" sec tc
}

# sink_detach NS IF
sink_detach() {
	nsenter --net="/run/netns/$1" tc qdisc del dev "$2" clsact
}

# sink_count NS IF: "packets bytes segments" the sink has counted so far
# (all CPUs; segments: a GSO skb counts as the frames it stands for).
sink_count() {
	local id map
	id=$(nsenter --net="/run/netns/$1" tc -j filter show dev "$2" ingress |
		/usr/bin/python3 -c 'import json, sys
for f in json.load(sys.stdin):
    p = f.get("options", {}).get("prog", {})
    if "id" in p:
        print(p["id"]); break')
	[[ -n $id ]] || { echo "sink_count: no sink program on $2" >&2; return 1; }
	map=$(bpftool -j prog show id "$id" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["map_ids"][0])')
	bpftool -j map dump id "$map" | /usr/bin/python3 -c 'import json, sys
p = b = s = 0
for e in json.load(sys.stdin):
    for v in e.get("formatted", {}).get("values", []):
        p += v["value"]["packets"]; b += v["value"]["bytes"]; s += v["value"]["segments"]
print(p, b, s)'
}

# summary_field FILE KEY...: the value at KEY (a path: drops rx_dropped) in
# the summary object of an offload-tool --json send/recv output (FILE may be
# /dev/stdin); nothing when there is no summary or no such key.
summary_field() {
	/usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1]):
    try:
        j = json.loads(line)
        if j.get("type") != "summary":
            continue
        for k in sys.argv[2:]:
            j = j[k]
        print(j)
    except (ValueError, KeyError, TypeError, AttributeError):
        continue' "$@"
}
