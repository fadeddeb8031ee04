# Scan cuobjdump -sass output: for each kernel, the vector loads (LDG.E.64/.128) issued before the first
# store of its main loop, and the instructions between them; report kernels whose loads are apart.
import re, sys
name = None; insts = []
def report(name, insts):
    if not name: return
    loads = [i for i, (off, op) in enumerate(insts) if re.match(r'LDG\.E(\.[A-Z0-9_]+)*\.(64|128)', op)]
    stores = [i for i, (off, op) in enumerate(insts) if op.startswith('STG')]
    if len(loads) < 2: return
    first_store = stores[0] if stores else len(insts)
    ls = [i for i in loads if i < first_store]
    if len(ls) < 2: return
    math = sum(1 for i in range(ls[0], ls[-1]) if re.match(r'(FFMA|FMUL|FADD|MUFU|HFMA2|HMUL2|F2FP|FSEL)', insts[i][1]))
    if math > 8:
        print(f"{math:4d} math between {len(ls)} loads  {name[:160]}")
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        report(name, insts); name = m.group(1); insts = []; continue
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[0-9T] )?([A-Z0-9_.]+)', line)
    if m: insts.append((m.group(1), m.group(2)))
report(name, insts)
