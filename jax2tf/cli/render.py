"""The text form of an inspect report: a few aligned sections. It reads only
the report dict, the same one `--json` prints."""

from collections.abc import Sequence

WIDTH = 100


def _table(rows: Sequence[Sequence[str]], indent: int = 0) -> list[str]:
  """Rows with every column but the last padded to its widest cell."""
  if not rows:
    return []
  widths = [max(len(r[i]) for r in rows if len(r) > i) for i in range(max(map(len, rows)))]
  lines = []
  for row in rows:
    cells = [c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row)]
    lines.append((" " * indent + "  ".join(cells)).rstrip())
  return lines


def _bytes(n: int) -> str:
  return f"{n:,} bytes"


def _shape(shape) -> str:
  if shape is None:
    return "unknown rank"
  return "[" + ", ".join(str(d) for d in shape) + "]"


def _histogram(counts: dict, indent: int = 2) -> list[str]:
  """`name count` cells, packed into as many columns as fit the width."""
  if not counts:
    return [" " * indent + "(none)"]
  cells = [f"{name} {count}" for name, count in counts.items()]
  cell = max(map(len, cells)) + 3
  per_line = max(1, (WIDTH - indent) // cell)
  return [
    (" " * indent + "".join(c.ljust(cell) for c in cells[i : i + per_line])).rstrip()
    for i in range(0, len(cells), per_line)
  ]


def _signatures(signatures: dict, shape_key: str) -> list[str]:
  lines = ["Signatures"]
  if not signatures:
    return lines + ["  (none)"]
  for name, sig in signatures.items():
    lines.append(f"  {name}")
    rows = [
      [side[:-1], t["name"], str(t["dtype"]), _shape(t[shape_key])]
      for side in ("inputs", "outputs")
      for t in sig[side]
    ]
    lines += _table(rows, indent=4)
  return lines


def _tensors(shown: list[str], polymorphic: list[bool]) -> str:
  """All of them while they fit a line; else their count and the polymorphic ones."""
  count = f"{sum(polymorphic)} of {len(shown)} polymorphic"
  listed = ", ".join(shown)
  if len(listed) <= 60:
    return f"{listed}  ({count})" if shown else "none"
  dynamic = ", ".join(s for s, p in zip(shown, polymorphic) if p)
  return f"{count}" + (f": {dynamic}" if dynamic else "")


def _module(m: dict) -> list[str]:
  where = f"{m['function']} / {m['node']}" if m["function"] else m["node"]
  if m["module_inputs"] is None:
    inputs = f"unread: {m['module_inputs_error']}"
  else:
    shapes = [i["shape"] for i in m["module_inputs"]]
    inputs = _tensors(
      [i["type"] for i in m["module_inputs"]], [s is not None and None in s for s in shapes]
    )
  out_shapes = m["output_shapes"]
  outputs = _tensors([_shape(s) for s in out_shapes], [s is None or None in s for s in out_shapes])
  stablehlo = m["stablehlo_version"] or f"unknown (producer {m['producer']!r})"
  rows = [
    ["calling convention", str(m["version"])],
    ["StableHLO", stablehlo],
    ["platforms", ", ".join(m["platforms"]) or "any (a platform-independent module)"],
    ["disabled checks", ", ".join(m["disabled_checks"]) or "none"],
    ["module inputs", inputs],
    ["outputs", outputs],
    ["dimension args", str(m["dimension_args"])],
    ["token in/out", "yes" if m["has_token_input_output"] else "no"],
    ["module size", _bytes(m["module_bytes"])],
    ["TF releases", m["tf_releases"]["summary"]],
  ]
  return [f"  {where}"] + _table(rows, indent=4)


def saved_model(r: dict) -> list[str]:
  tags = "; ".join(",".join(t) for t in r["tags"])
  files = ", ".join(f"{name} {_bytes(n)}" for name, n in r["files"].items())
  lines = _table(
    [
      ["SavedModel", r["path"]],
      ["written by", f"TensorFlow {r['written_by'] or '(not recorded)'} (tags: {tags})"],
      ["files", files],
    ]
  )
  lines += [""] + _signatures(r["signatures"], "shape") + [""]
  modules = r["xla_call_modules"]
  if modules:
    lines.append(f"Native serialization: {len(modules)} XlaCallModule op(s)")
    for m in modules:
      lines += _module(m)
    releases = r["tf_releases"]["summary"]
  else:
    lines.append("Graph serialization: no XlaCallModule op")
    releases = "not limited by an XlaCallModule op"
  ops = r["ops"]
  scope = "the signatures run" if ops["scope"] == "signatures" else "the saved functions run"
  lines += [
    "",
    f"Ops that {scope} ({ops['functions_counted']} of {ops['functions_total']} functions)",
  ]
  lines += _histogram(ops["histogram"])
  rows = [["TF releases", releases], ["TFLite / TF.js converters", r["converters"]]]
  if r["converters_note"]:
    rows.append(["", r["converters_note"]])
  return lines + [""] + _table(rows)


def tflite(r: dict) -> list[str]:
  weights = f"{_bytes(r['weight_bytes'])} in {r['constant_buffers']} constant buffer(s)"
  runtime = r["min_runtime_version"]
  lines = _table(
    [
      ["TFLite model", r["path"]],
      ["file size", _bytes(r["file_bytes"])],
      ["weights", weights],
      ["min runtime", f"TFLite {runtime}" if runtime else "(not recorded)"],
      ["needs", "; ".join(r["needs"]) or "builtin operators only"],
    ]
  )
  lines += [""] + _signatures(r["signatures"], "shape_signature") + [""]
  total = sum(r["ops"].values())
  lines.append(f"Operators ({total} in {len(r['ops'])} kinds)")
  lines += _histogram(r["ops"])
  return lines


def tfjs(r: dict) -> list[str]:
  shards = len(r["shards"])
  lines = _table(
    [
      ["TF.js graph model", r["path"]],
      ["converted by", f"{r['converted_by']} (TensorFlow {r['generated_by']})"],
      ["weights", f"{_bytes(r['weight_bytes'])} in {r['weights']} tensor(s), {shards} shard(s)"],
      [
        "shape checks",
        str(len(r["shape_checks"])) + (" (run in the model)" if r["shape_checks"] else ""),
      ],
      ["needs", "; ".join(r["needs"]) or f"ops TF.js {r['tfjs_checked']} runs, only"],
    ]
  )
  lines += [""] + _signatures(r["signatures"], "shape") + [""]
  total = sum(r["ops"].values())
  lines.append(f"Ops ({total} in {len(r['ops'])} kinds)")
  lines += _histogram(r["ops"])
  return lines


def text(report: dict) -> str:
  render = {"saved_model": saved_model, "tflite": tflite, "tfjs": tfjs}[report["kind"]]
  return "\n".join(render(report)) + "\n"
