/// The reference that ``FilterReferenceCLITests`` checks Folio's filters
/// against: a Python program that reads the public files itself, types CSV
/// fields as `folio import` documents it (an empty field is null, `true`
/// and `false` are booleans, a JSON number literal is a number, the rest is
/// text), makes seeded expressions over every column, and counts their
/// matches twice: by its own evaluation of the rules in docs/queries.md
/// (numbers as `Decimal`, strings by UTF-16 code units), and with SQLite
/// over a table that holds each value beside its kind.
///
/// Reads `{"seed": N, "files": [{"path", "format", "table", "atoms",
/// "compounds"}]}` on stdin; prints `{"columns": {table: [name]},
/// "cases": [{"table", "where", "order", "python", "sqlite"}]}`.
enum FilterReference {
  static let program = #"""
    # The reference for Folio's filters: reads the public files itself, types
    # CSV fields as Folio's import documents (empty: null, true/false, JSON
    # number literals; all else text), makes seeded expressions, and counts the
    # matches twice: by evaluating them here with Decimal, and with SQLite on a
    # table holding each value with its kind.
    import csv, json, random, re, sqlite3, sys
    from decimal import Decimal

    NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
    spec = json.load(sys.stdin)
    rng = random.Random(spec["seed"])
    MISSING = object()

    def typed(text):
        if text == "": return None
        if text == "true": return True
        if text == "false": return False
        if NUMBER.match(text): return Decimal(text)
        return text

    def load(path, fmt):
        if fmt == "csv":
            with open(path, newline="", encoding="utf-8") as f:
                return [{k: typed(v) for k, v in row.items()} for row in csv.DictReader(f)]
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_float=Decimal, parse_int=Decimal)

    def kind(v):
        if v is MISSING: return "missing"
        if v is None: return "null"
        if v is True or v is False: return "bool"
        if isinstance(v, Decimal): return "number"
        if isinstance(v, str): return "string"
        return "composite"

    def literal_text(v):
        if v is None: return "null"
        if v is True: return "true"
        if v is False: return "false"
        if isinstance(v, Decimal): return str(v) if NUMBER.match(str(v)) else format(v, "f")
        return json.dumps(v, ensure_ascii=False)

    def field(name):
        return name if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", name) else "`" + name + "`"

    # Python's rule, written from docs/queries.md.
    def py_eval(e, row):
        t = e[0]
        if t == "and": return py_eval(e[1], row) and py_eval(e[2], row)
        if t == "or": return py_eval(e[1], row) or py_eval(e[2], row)
        if t == "not": return not py_eval(e[1], row)
        if t == "exists": return e[1] in row
        _, col, op, lit = e
        v = row.get(col, MISSING)
        if op in ("==", "!="):
            if lit is None: eq = v is MISSING or v is None
            elif kind(v) != kind(lit): eq = False
            else: eq = v == lit
            return eq if op == "==" else not eq
        if kind(v) != kind(lit) or kind(v) not in ("number", "string", "bool"): return False
        if kind(v) == "string":  # by UTF-16 code units
            a, b = v.encode("utf-16-be"), lit.encode("utf-16-be")
        else:
            a, b = v, lit
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

    # SQL's rendering: each column c is stored as c (the value) and c_k (its kind).
    def sql(e, cols):
        t = e[0]
        if t in ("and", "or"): return f"(({sql(e[1], cols)}) {t.upper()} ({sql(e[2], cols)}))"
        if t == "not": return f"(NOT ({sql(e[1], cols)}))"
        if t == "exists": return f"(c{cols[e[1]]}_k != 'missing')"
        _, col, op, lit = e
        c = f"c{cols[col]}"
        k = kind(lit)
        if op in ("==", "!="):
            if lit is None: eq = f"{c}_k IN ('null', 'missing')"
            else: eq = f"({c}_k = '{k}' AND {c} = ?)"
            return eq if op == "==" else f"NOT ({eq})"
        if k not in ("number", "string", "bool"): return "0"
        return f"({c}_k = '{k}' AND {c} {op} ?)"

    def sql_params(e):
        t = e[0]
        if t in ("and", "or"): return sql_params(e[1]) + sql_params(e[2])
        if t == "not": return sql_params(e[1])
        if t == "exists": return []
        _, col, op, lit = e
        if lit is None or kind(lit) not in ("number", "string", "bool"): return []
        return [sql_value(lit)]

    def sql_value(v):
        if isinstance(v, bool): return int(v)
        if isinstance(v, Decimal): return float(v)
        return v

    def text(e):
        t = e[0]
        if t in ("and", "or"): return f"({text(e[1])}) {'&&' if t == 'and' else '||'} ({text(e[2])})"
        if t == "not": return f"!({text(e[1])})"
        if t == "exists": return f"exists({field(e[1])})"
        _, col, op, lit = e
        return f"{field(col)} {op} {literal_text(lit)}"

    out = []
    columns = {}
    for data in spec["files"]:
        rows = load(data["path"], data["format"])
        cols = {}
        for r in rows:
            for k in r:
                cols.setdefault(k, len(cols))
        names = list(cols)
        columns[data["table"]] = names
        db = sqlite3.connect(":memory:")
        # SQLite compares text by bytes (UTF-8); the UTF-16 order differs only
        # for supplementary characters against U+E000..U+FFFF, so a collation
        # that compares UTF-16 keeps the reference exact.
        db.create_collation("utf16", lambda a, b: (a.encode("utf-16-be") > b.encode("utf-16-be")) - (a.encode("utf-16-be") < b.encode("utf-16-be")))
        db.execute("CREATE TABLE t (" + ", ".join(f"c{i} COLLATE utf16, c{i}_k TEXT" for i in range(len(names))) + ")")
        for r in rows:
            vals = []
            for n in names:
                v = r.get(n, MISSING)
                vals += [None if v is MISSING else sql_value(v), kind(v)]
            db.execute("INSERT INTO t VALUES (" + ",".join("?" * len(vals)) + ")", vals)
        atoms = []
        for n in names:
            values = [r[n] for r in rows if n in r]
            nums = sorted({v for v in values if kind(v) == "number"})
            strs = sorted({v for v in values if kind(v) == "string"})
            lits = [None, True]
            if nums:
                lits += [nums[0], nums[len(nums) // 2], nums[-1], (nums[0] + nums[-1]) / 2, Decimal(0)]
            if strs:
                lits += [strs[0], strs[len(strs) // 2], "NA", ""]
            if not nums: lits.append(Decimal(5))
            if not strs: lits.append("NA")
            for op in ["==", "!=", "<", "<=", ">", ">="]:
                for lit in lits:
                    atoms.append(("cmp", n, op, lit))
            atoms.append(("exists", n))
        chosen = rng.sample(atoms, min(len(atoms), data["atoms"]))
        for _ in range(data["compounds"]):
            a, b = rng.sample(atoms, 2)
            op = rng.choice(["and", "or", "notand"])
            chosen.append(("and", ("not", a), b) if op == "notand" else (op, a, b))
        for e in chosen:
            py = sum(1 for r in rows if py_eval(e, r))
            sq = db.execute("SELECT count(*) FROM t WHERE " + sql(e, cols), sql_params(e)).fetchone()[0]
            first = e[1] if e[0] in ("cmp", "exists") else (e[1][1] if e[1][0] != "not" else e[1][1][1])
            out.append({"table": data["table"], "where": text(e), "python": py, "sqlite": sq, "order": field(first)})
    json.dump({"columns": columns, "cases": out}, sys.stdout, ensure_ascii=False)
    """#
}
