# SPDX-License-Identifier: MIT
# The batch modules (src/jobs.c, src/report.c, src/progress.c, outfile sums): the C checks
# in tests/jobs and tests/jobs_out.c, then the report they leave, read independently: every
# line parses as JSON with the fields in order (python3, where installed) and every output's
# size and SHA-256 agree with wc -c and sha256sum. Sourced by tests/run.sh; helpers and
# variables start with jb_.

jb_d=$T/jobs
rm -rf "$jb_d"
mkdir -p "$jb_d"

# ---- C checks --------------------------------------------------------------------------
c_checks jobs "$jb_d/jobs.out" "${JOBSTEST:-tests/jobs}" "$jb_d"

# ---- the report against sha256sum -------------------------------------------------------
# Each output object as "PATH BYTES SHA256" (the test's paths hold no '"' or '\').
jb_n=0
jb_bad=0
grep -o '{"path":"[^"]*","bytes":[0-9]*,"sha256":"[0-9a-f]*"}' "$jb_d/report.jsonl" |
	sed 's/^{"path":"\([^"]*\)","bytes":\([0-9]*\),"sha256":"\([0-9a-f]*\)"}$/\1 \2 \3/' \
		>"$jb_d/outputs.txt"
while read -r jb_path jb_bytes jb_sum; do
	jb_n=$((jb_n + 1))
	jb_real=$(sha256sum <"$jb_path" | cut -d' ' -f1)
	jb_size=$(wc -c <"$jb_path" | tr -d ' ')
	if [ "$jb_real" != "$jb_sum" ] || [ "$jb_size" != "$jb_bytes" ]; then
		jb_bad=$((jb_bad + 1))
		echo "  $jb_path: report says $jb_bytes bytes $jb_sum, file has $jb_size bytes $jb_real"
	fi
done <"$jb_d/outputs.txt"
if [ "$jb_n" = 4 ] && [ "$jb_bad" = 0 ]; then ok; else
	bad "report: sizes and SHA-256 of $jb_n outputs (want 4) against sha256sum, $jb_bad differ"
fi

# ---- the report as JSON --------------------------------------------------------------------
if command -v python3 >/dev/null 2>&1; then
	# Every line alone parses; fields in order; the odd input name decodes to the bytes the
	# test wrote, each byte that is not UTF-8 read as the character of its value.
	if python3 -c '
import json, sys
keys = ["index", "input", "status", "error", "width", "height", "channels", "outputs",
        "device", "ms"]
raw = b"odd\"\\\n\t\x01\xff\xc3\xa9\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80.png\xe2\x82"
want_odd = ""
i = 0
while i < len(raw):  # valid UTF-8 runs decode; other bytes map to U+00XX
    for n in (4, 3, 2, 1):
        try:
            want_odd += raw[i:i + n].decode("utf-8")
            i += n
            break
        except UnicodeDecodeError:
            pass
    else:
        want_odd += chr(raw[i])
        i += 1
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"", "the last line ends in a newline"
objs = [json.loads(l) for l in lines[:-1]]
assert len(objs) == 3, len(objs)
for o in objs:
    assert list(o) == keys, list(o)
    assert list(o["ms"]) == ["decode", "stages", "encode", "total"], o["ms"]
a, f, s = objs
assert (a["index"], a["status"], a["width"], a["height"], a["channels"], a["device"]) == \
    (1, "ok", 6, 5, 3, "cpu"), a
assert a["error"] is None and len(a["outputs"]) == 3
assert a["ms"] == {"decode": 1.25, "stages": 2.5, "encode": 3.0, "total": 7.125}, a["ms"]
assert f["input"] == want_odd, (f["input"], want_odd)
assert (f["status"], f["width"], f["device"], f["outputs"]) == ("failed", None, None, []), f
assert f["error"].startswith("odd: ")
assert (s["status"], s["error"], len(s["outputs"])) == ("skipped", None, 1), s
n = 0
for l in open(sys.argv[2], "rb"):
    o = json.loads(l)
    assert list(o) == keys
    n += 1
assert n == 1600, n
' "$jb_d/report.jsonl" "$jb_d/many.jsonl" >"$jb_d/py.out" 2>&1; then ok; else
		bad "report: lines do not parse as the JSON the header describes"
		sed 's/^/    | /' "$jb_d/py.out" | tail -n 5
	fi
else
	echo "skipping the JSON parse of --report lines: no python3"
fi
