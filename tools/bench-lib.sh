# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Shared by the veth benches (bench-threads, bench-e2e): the TC counting sink
# (bench/progs/xo_bench_sink.bpf.c) on an interface of a namespace. Sourced;
# needs $build (the build tree, where bpf/xo_bench_sink.bpf.o is).

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
