# Regenerate (from this directory): python3 gen.py. It runs the lab script's own summarise,
# so the Go port is checked against the reference, not against itself.
# Generates golden cases for sim.SummariseLab from run.py's own summarise.
import json, os, random, sys, types, importlib.util
spec = importlib.util.spec_from_file_location("runpy_lab", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../cmd/servelab/testdata/run.py"))
lab = importlib.util.module_from_spec(spec); spec.loader.exec_module(lab)

def case(name, arrivals, inject, long, short, wall, label="run", base="http://localhost:8000", sc=16, lil=32000):
    args = types.SimpleNamespace(label=label, base_url=base, short_concurrency=sc, long_input_len=lil)
    run = {"inject_wall": inject, "arrivals": sorted(arrivals), "long": long, "short": short, "wall": wall}
    want = lab.summarise(args, run)
    doc = {"run": {"label": label, "base_url": base, "short_concurrency": sc, "long_input_len": lil,
                   "inject": inject, "arrivals": [{"t": t, "gap": g} for t, g in arrivals],
                   "long": long, "short": short, "wall": wall}, "want": want}
    with open(name + ".json", "w") as fh:
        json.dump(doc, fh)

def res(ok, ttft=0.0, err=""):
    return {"ok": ok, "ttft": ttft, "latency": ttft + 0.5, "chunks": 16 if ok else 0, "itl": [], "error": err}

rng = random.Random(7)
def stream(n, start, end, inject, stall_at, stall):
    out = []
    for _ in range(n):
        t = start + rng.random() * 0.01
        while t < end:
            g = 0.0077 + rng.random() * 0.0005
            if t < stall_at <= t + g:
                g += stall
            t += g
            out.append((t, g))
    return out

inject = 1234.5678
arr = stream(6, inject - 1, inject + 1.5, inject, inject + 0.01, 0.9)
rng.shuffle(arr)
case("prefill_first", arr, inject, [res(True, 0.93)], [res(True, 1.0)] * 40 + [res(False, 0, "HTTP 400: too long")], 5.0123,
     label="unchunked", sc=16, lil=16000)
arr = stream(3, inject - 0.5, inject + 1, inject, inject + 10, 0)
case("long_failed", arr, inject, [res(False, 0, "HTTP 400: {\"error\": ...}"), res(False, 0, "second")], [res(True, 1.0)] * 9, 3.2)
case("no_arrivals", [], inject, [], [], 1.0, label="empty")
case("ties", [(10.0, 0.5), (11.0, 0.5), (9.0, 0.1), (12.0, 0.2), (10.5, 0.5)], 10.2, [res(False, 0, "x"), res(True, 0.6), res(True, 0.1)], [res(True, 1)], 0.0)
case("no_quiet", [(5.0 + i * 0.01, 0.01 + (i % 7) * 0.001) for i in range(101)], 4.0, [res(True, 1.2)], [res(True, 1)] * 3, 2.5)
case("zero_quiet_median", [(1.0, 0.0), (1.1, 0.0), (1.2, 0.0), (3.0, 0.4)], 2.0, [res(True, 1.5)], [], 4.0)
case("single", [(0.25, 0.125)], 0.5, [], [res(True, 1)], 1.0)
