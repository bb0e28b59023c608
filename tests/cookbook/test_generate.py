"""`sync generate` / `sync reencode`: the bundled example end to end, pins, KV donors, CLI."""

from __future__ import annotations

import copy
import dataclasses
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from syncer.cli import main as cli_main
from syncer.cookbook.decode import Decoder, load_decoder
from syncer.cookbook.jsmodule import load_module
from syncer.encoder.rendered_cells import image_commit
from syncer.errors import SyncError
from syncer.inferencex.render import render_config
from syncer.model import Selection, sort_worker_args
from syncer.syncconfig import Pin, load_sync_config
from syncer.usecases.generate import build_module_spec, generate_model

MODEL = "deepseek-ai/deepseek-v4_1"
DSPARK = "dsv41flash-fp4-gb300-sglang-agentic-dspark"
DISAGG = "dsv41flash-fp4-gb300-dynamo-sglang-agentic-disagg"
PAGE = "docs/cookbook/autoregressive/DeepSeek/DeepSeek-V4_1.mdx"


@pytest.fixture
def config():
    return load_sync_config(ROOT / "sync.yaml")


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    pages = tmp_path / "cookbook"
    (pages / PAGE).parent.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "cookbook" / PAGE, pages / PAGE)
    out = tmp_path / "snippets"
    (out / "deepseek-ai").mkdir(parents=True)
    shutil.copy(ROOT / "cookbook_snippets" / f"{MODEL}.jsx", out / f"{MODEL}.jsx")
    return {"pages": pages, "out": out}


def run_cli(*argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        cli_main(list(argv))
    return int(done.value.code or 0)


def test_committed_module_and_page_are_current(config) -> None:
    """The drift gate: regenerating the bundled example changes nothing that is committed."""
    result = generate_model(
        MODEL,
        config=config,
        inferencex=ROOT / "examples" / "inferencex",
        out_dir=ROOT / "cookbook_snippets",
        pages_dir=ROOT / "examples" / "cookbook",
        check=True,
    )
    assert not result.changed, "cookbook_snippets is stale: run `sync generate --all`"
    assert not result.page_changed and result.page_conflict is None
    assert result.cells == 5


def test_example_module_content() -> None:
    decoder = load_decoder(ROOT / "cookbook_snippets" / f"{MODEL}.jsx")
    data = decoder.data
    assert [h["id"] for h in data["hardware"]] == ["gb300"]
    assert list(data["source"]["prs"]) == ["3859", "3871"]
    cells = {c["id"]: (i, c) for i, c in enumerate(data["cells"])}
    assert set(cells) == {f"{DSPARK}#0", f"{DSPARK}#1", f"{DSPARK}#2", f"{DISAGG}#0", f"{DISAGG}#1"}
    ci, dep2 = cells[f"{DSPARK}#2"]
    assert dep2["label"] == "Agg DEP2" and dep2["submitted"] == "sglang"
    assert dep2["prov"]["run"] == "41000000001" and dep2["prov"]["status"] == "verified-pr"
    assert dep2["imageCommit"] == "e6072935"
    assert [p["concs"] for p in dep2["points"]] == [[64], [128]]
    assert decoder.status_for(Selection(ci, 0, "sglang")) == "verified-pr"
    assert decoder.status_for(Selection(ci, 0, "dynamo")) == "derived"
    info = decoder.point_info(ci, 1)
    assert info["runUrl"] == "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/41000000001"
    assert info["useComment"].endswith("/pull/3859#issuecomment-4100000000117")
    di, disagg = cells[f"{DISAGG}#1"]
    assert disagg["submitted"] == "dynamo" and disagg["label"].startswith("Disagg 1P1D")
    assert "run" not in disagg["prov"] and disagg["prov"]["status"] == "in-progress"
    assert decoder.status_for(Selection(di, 0, "dynamo")) == "in-progress"
    assert disagg["points"][0]["kv"] == "hicache"
    assert disagg["kv"]["available"] == ["none", "hicache"]
    assert disagg["kv"]["hicache"]["donor"] == DISAGG
    assert "mooncake" in disagg["kv"]["unavailable"]
    # The measured point's commands are exactly the render's cookbook form.
    rendered = render_config(ROOT / "examples" / "inferencex", DSPARK)
    by_item = {}
    for point in rendered.points:
        by_item.setdefault(point.item, []).append(point)
    for item, points in by_item.items():
        ci, _ = cells[f"{DSPARK}#{item}"]
        for pi, point in enumerate(points):
            for router in ("sglang", "dynamo"):
                assert decoder.blocks_for(Selection(ci, pi, router)) == point.cookbook[router]


def test_generate_writes_then_is_idempotent(config, workspace) -> None:
    out, pages = workspace["out"], workspace["pages"]
    (out / f"{MODEL}.jsx").unlink()
    page_before = (pages / PAGE).read_text(encoding="utf-8")
    kw = {"config": config, "inferencex": ROOT / "examples" / "inferencex", "out_dir": out}
    first = generate_model(MODEL, pages_dir=pages, today="2026-10-14", **kw)
    assert first.changed and not first.page_changed
    assert first.text == (ROOT / "cookbook_snippets" / f"{MODEL}.jsx").read_text(encoding="utf-8")
    # A later day with the same data: nothing changes, not even generatedOn.
    again = generate_model(MODEL, pages_dir=pages, today="2026-12-01", **kw)
    assert not again.changed and again.text == first.text
    assert (pages / PAGE).read_text(encoding="utf-8") == page_before


def test_new_pin_changes_provenance_and_date(config, workspace) -> None:
    out = workspace["out"]
    pin = config.pins()[DISAGG]
    pinned = dataclasses.replace(pin, run="41000000999", comment="555", status="verified-pr")
    result = generate_model(
        MODEL,
        config=config,
        inferencex=ROOT / "examples" / "inferencex",
        out_dir=out,
        pins={DISAGG: pinned},
        today="2026-12-01",
    )
    assert result.changed
    data = load_module(out / f"{MODEL}.jsx").value
    assert data["generatedOn"] == "2026-12-01"
    assert data["source"]["prs"]["3871"]["status"] == "verified-pr"
    assert data["source"]["prs"]["3871"]["run"].endswith("/actions/runs/41000000999")
    disagg = [c for c in data["cells"] if c["configKey"] == DISAGG]
    assert all(c["prov"]["run"] == "41000000999" and c["prov"]["comment"] == "555" for c in disagg)


def test_check_reports_drift_without_writing(config, workspace) -> None:
    target = workspace["out"] / f"{MODEL}.jsx"
    stale = target.read_text(encoding="utf-8").replace(
        '"goldenAL": "3.51"', '"goldenAL": "3.50"', 1
    )
    target.write_text(stale, encoding="utf-8")
    code = run_cli(
        "generate", "--all", "--check", "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples" / "inferencex"),
        "--out", str(workspace["out"]), "--pages", str(workspace["pages"]),
    )  # fmt: skip
    assert code == 1
    assert target.read_text(encoding="utf-8") == stale
    code = run_cli(
        "generate", MODEL, "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples" / "inferencex"),
        "--out", str(workspace["out"]), "--pages", str(workspace["pages"]),
    )  # fmt: skip
    assert code == 0 and target.read_text(encoding="utf-8") != stale
    code = run_cli(
        "generate", "--all", "--check", "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples" / "inferencex"),
        "--out", str(workspace["out"]), "--pages", str(workspace["pages"]),
    )  # fmt: skip
    assert code == 0


def test_check_prints_the_reviewer_diff_of_what_drifted(workspace, capsys) -> None:
    target = workspace["out"] / f"{MODEL}.jsx"
    text = target.read_text(encoding="utf-8")
    assert text.count('"--mem-fraction-static", "0.8"]') == 1
    target.write_text(
        text.replace('"--mem-fraction-static", "0.8"]', '"--mem-fraction-static", "0.75"]')
    )
    capsys.readouterr()
    code = run_cli(
        "generate", "--all", "--check", "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples" / "inferencex"),
        "--out", str(workspace["out"]), "--no-page",
    )  # fmt: skip
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    # what was read first, then the verdict of each module
    assert [line.split(":")[0] for line in out[:3]] == [
        "read sync.yaml",
        "read InferenceX checkout",
        "read cookbook modules",
    ]
    assert out[3] == f"{target}: would change (5 cells, 36 cases decoded back identical)"
    assert out[4] == f"Reviewer diff {target} → generated"
    assert "-  --mem-fraction-static 0.75 \\" in out
    assert "+  --mem-fraction-static 0.8 \\" in out
    # Nothing drifted: no diff, only the verdict.
    target.write_text(text, encoding="utf-8")
    code = run_cli(
        "generate", "--all", "--check", "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples" / "inferencex"),
        "--out", str(workspace["out"]), "--no-page",
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == f"read cookbook modules: {workspace['out']}"
    assert out[3:] == [f"{target}: unchanged (5 cells, 36 cases decoded back identical)"]


def test_cli_bad_input_exits_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "sync.yaml"
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace(f"key: {DSPARK}", "key: dsv41flash-nope"), encoding="utf-8")
    code = run_cli(
        "generate", "--all", "--config", str(bad), "--out", str(tmp_path / "o"),
        "--inferencex", str(ROOT / "examples" / "inferencex"), "--no-page",
    )  # fmt: skip
    assert code == 2
    assert "dsv41flash-nope" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert run_cli("generate", "--config", str(bad)) == 2  # neither MODEL nor --all
    capsys.readouterr()
    assert run_cli("generate", "--all", "--check", "--date", "2026-13-45") == 2
    assert '--date "2026-13-45": expected a date as YYYY-MM-DD' in capsys.readouterr().err


def test_generate_writes_nothing_when_the_roundtrip_differs(workspace, monkeypatch, capsys) -> None:
    """`sync generate` decodes the new module back before writing: an encoder that loses a
    value is refused with one error line naming it, exit 2, module and page untouched."""
    from syncer.encoder import encode

    real = encode.compact_module

    def lossy(spec):
        value = real(spec)
        value["envs"][0] = {**value["envs"][0], "SGLANG_INJECTED_BY_TEST": "1"}
        return value

    monkeypatch.setattr(encode, "compact_module", lossy)
    # A spec this process encoded before is not encoded again (usecases.generate keeps it).
    from syncer.recent import Recent
    from syncer.usecases import generate as generate_usecase

    monkeypatch.setattr(generate_usecase, "_ENCODED", Recent(8))
    out, pages = workspace["out"], workspace["pages"]
    module = out / f"{MODEL}.jsx"
    module.write_text(module.read_text(encoding="utf-8") + "// stale\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in (module, pages / PAGE)}
    code = run_cli(
        "generate", MODEL, "--config", str(ROOT / "sync.yaml"),
        "--inferencex", str(ROOT / "examples" / "inferencex"),
        "--out", str(out), "--pages", str(pages),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "SGLANG_INJECTED_BY_TEST" in err
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in module.parent.iterdir()) == [module.name]  # no temp file


def test_all_writes_nothing_when_a_later_model_fails(tmp_path: Path, workspace, capsys) -> None:
    """`--all` proves every model before writing any: a bad second model leaves the first
    model's stale module as it was."""
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    second = (
        "  - path: acme/broken\n    model: Broken\n    page: docs/broken.mdx\n"
        "    section: AgentX\n    hardware: [{id: gb300, label: GB300}]\n"
        "    configs:\n      - key: dsv41flash-fp4-gb300-nope\n        source: main\n"
        "        pin: {status: verified, run: '1', pr: 1, date: '2026-10-01',\n"
        "              sha: 89abcdef0123456789abcdef0123456789abcdef}\n"
    )
    config = tmp_path / "sync.yaml"
    config.write_text(text + second, encoding="utf-8")
    module = workspace["out"] / f"{MODEL}.jsx"
    stale = module.read_text(encoding="utf-8").replace('"goldenAL": "3.51"', '"goldenAL": "3.5"')
    module.write_text(stale, encoding="utf-8")
    code = run_cli(
        "generate", "--all", "--config", str(config), "--no-page",
        "--inferencex", str(ROOT / "examples" / "inferencex"), "--out", str(workspace["out"]),
    )  # fmt: skip
    assert code == 2
    assert "dsv41flash-fp4-gb300-nope" in capsys.readouterr().err
    assert module.read_text(encoding="utf-8") == stale


def test_reencode_cli(tmp_path: Path, capsys) -> None:
    source = ROOT / "cookbook_snippets" / f"{MODEL}.jsx"
    out = tmp_path / "re.jsx"
    assert run_cli("reencode", str(source), "--out", str(out)) == 0
    assert out.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")
    assert "cases decoded back identical" in capsys.readouterr().out
    broken = tmp_path / "broken.jsx"
    broken.write_text("export const agentx = {cells: [};\n", encoding="utf-8")
    assert run_cli("reencode", str(broken), "--out", str(tmp_path / "x.jsx")) == 2
    assert not (tmp_path / "x.jsx").exists()
    capsys.readouterr()
    # An --out that cannot be written (its parent is a file): one error line, exit 2.
    assert run_cli("reencode", str(source), "--out", str(broken / "x.jsx")) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {broken / 'x.jsx'}: cannot write") and err.count("\n") == 1


def _with_mooncake_point(rendered):
    """The disagg config with one more point measured with a Mooncake store (own test data)."""
    rendered = copy.deepcopy(rendered)
    point = copy.deepcopy(rendered.points[-1])
    point.item, point.concs, point.kv, point.override = 7, [256], "mooncake", "override_mc_c256"
    master = {
        "kind": "mooncake-master",
        "count_nodes": 1,
        "ports": ["8700"],
        "cmd": "mooncake_master",
        "env": {},
        "args": [["--port", "8700"], ["--eviction_high_watermark_ratio", "0.90"]],
    }
    for blocks in point.cookbook.values():
        first_worker = next(i for i, b in enumerate(blocks) if b["kind"] == "worker")
        blocks.insert(first_worker, copy.deepcopy(master))
        for block in blocks:
            if block["kind"] != "worker":
                continue
            env = {"MOONCAKE_MASTER": "$MOONCAKE_MASTER_IP:8700", "MOONCAKE_PROTOCOL": "rdma"}
            block["env"] = dict(sorted({**block["env"], **env}.items()))
            if block["role"] == "prefill":
                linker = ["--enable-unified-cache-external-linker"]
                block["args"] = sort_worker_args([*block["args"], linker])
    rendered.points.append(point)
    return rendered


def test_mooncake_donor_gives_derived_tier(config) -> None:
    model = config.model(MODEL)
    model = dataclasses.replace(model, mooncake_donor=DISAGG)
    for cfg in model.configs:
        cfg.mooncake_unavailable = None

    def renderer(root: Path, key: str):
        rendered = render_config(root, key)
        return _with_mooncake_point(rendered) if key == DISAGG else rendered

    spec = build_module_spec(
        model, config=config, inferencex=ROOT / "examples" / "inferencex", renderer=renderer,
        today="2026-10-14",
    ).spec  # fmt: skip
    assert spec.kv_mooncake["donor"] == DISAGG
    assert spec.kv_mooncake["args"] == [["--enable-unified-cache-external-linker"]]
    assert set(spec.kv_mooncake["master"]) == {"dynamo", "sglang"}
    assert spec.kv_mooncake["decode_env"]["MOONCAKE_PROTOCOL"] == "rdma"
    from syncer.encoder.encode import encode_module

    value, _, _ = encode_module(spec, path="mooncake")
    decoder = Decoder(value)
    ci = next(i for i, c in enumerate(value["cells"]) if c["configKey"] == DSPARK)
    assert value["cells"][ci]["kv"]["available"] == ["none", "hicache", "mooncake"]
    blocks = decoder.blocks_for(Selection(ci, 0, "sglang", "mooncake"))
    assert [b["kind"] for b in blocks] == ["mooncake-master", "worker"]
    assert decoder.status_for(Selection(ci, 0, "sglang", "mooncake")) == "derived"


def test_hicache_donor_without_hicache_point(config) -> None:
    model = dataclasses.replace(config.model(MODEL), hicache_donor=DSPARK)
    with pytest.raises(SyncError, match="no point measured with hicache"):
        build_module_spec(model, config=config, inferencex=ROOT / "examples" / "inferencex")


def test_field_helpers() -> None:
    assert (
        image_commit("lmsysorg/sglang:nightly-dev-cu13-20261012-e6072935@sha256:ab") == "e6072935"
    )
    assert image_commit("lmsysorg/sglang:v0.5.9-cu129") is None


def test_cells_split_by_spec_setting_and_colliding_concurrencies() -> None:
    """A cell is one shape with one speculative-decoding detail, and never has two points at
    one concurrency (the page selects points by concurrency): a row whose concurrencies are
    taken goes to the next cell of its shape, whole."""
    from types import SimpleNamespace

    from syncer.encoder.rendered_cells import group_points

    def pt(item: int, conc: int, shape: str = "agg-tp2", detail: str = "MTP 3-1-4"):
        return SimpleNamespace(item=item, concs=[conc], shape=shape, detail=detail)

    points = [
        pt(0, 1), pt(0, 44),  # row 0
        pt(1, 44),  # row 1: c44 taken by row 0 -> second cell
        pt(2, 8), pt(2, 16),  # row 2: fits the first cell
        pt(3, 44, detail="MTP 7-1-8"),  # other spec setting -> own cell
        pt(4, 1, shape="agg-tp4"),  # other shape -> own cell
        pt(5, 2), pt(5, 44),  # row 5: c44 taken in both tp2 cells -> third cell
    ]  # fmt: skip
    cells = group_points(points)
    assert [[(p.item, p.concs[0]) for p in cell] for cell in cells] == [
        [(0, 1), (0, 44), (2, 8), (2, 16)],
        [(1, 44)],
        [(3, 44)],
        [(4, 1)],
        [(5, 2), (5, 44)],
    ]


def test_cells_with_the_same_label_get_distinct_details() -> None:
    from syncer.encoder.cells import CellSpec, PointSpec, RouterSpec
    from syncer.encoder.rendered_cells import disambiguate

    def cell(key: str, item: int, kv: str = "none", mrr: str = "4", hw: str = "gb300") -> CellSpec:
        worker = {"kind": "worker", "args": [["--max-running-requests", mrr], ["--tp", "4"]]}
        meta = {"id": f"{key}#{item}", "hw": hw, "ckpt": "o/m", "label": "Agg TP4",
                "detail": "MTP 3-1-4", "configKey": key, "submitted": "sglang"}  # fmt: skip
        point = PointSpec(concs=[1], item=item, kv=kv, blocks={"sglang": [worker]})
        return CellSpec(meta=meta, routers={"sglang": RouterSpec()}, points=[point])

    cells = [
        cell("a", 0), cell("b", 0),  # two configs: the key
        cell("c", 0, kv="none"), cell("c", 1, kv="hicache"),  # one config, two measured tiers
        cell("d", 0, mrr="4"), cell("d", 1, mrr="2"),  # one config, one tier: the flag
        cell("e", 0, hw="h100"),  # alone in its group: unchanged
    ]  # fmt: skip
    disambiguate(cells)
    assert [c.meta["detail"] for c in cells] == [
        "MTP 3-1-4 · a",
        "MTP 3-1-4 · b",
        "MTP 3-1-4 · c · measured with no KV offload",
        "MTP 3-1-4 · c · measured with HiCache",
        "MTP 3-1-4 · d · --max-running-requests 4",
        "MTP 3-1-4 · d · --max-running-requests 2",
        "MTP 3-1-4",
    ]
    before = [c.meta["detail"] for c in cells]
    disambiguate(cells)  # a refresh runs it again over kept cells: no double suffix
    assert [c.meta["detail"] for c in cells] == before


def test_pin_override_in_progress(config) -> None:
    pin = Pin(DSPARK, "3859", "6b07b8e6930edcb8309cb59ca758fce5a3ef3f6b", None, None,
              "in-progress", None)  # fmt: skip
    spec = build_module_spec(
        config.model(MODEL), config=config, inferencex=ROOT / "examples" / "inferencex",
        pins={DSPARK: pin},
    ).spec  # fmt: skip
    for cell in spec.cells:
        if cell.config_key == DSPARK:
            assert all(p.prov["status"] == "in-progress" and "run" not in p.prov
                       for p in cell.points)  # fmt: skip


def test_refresh_one_config_keeps_the_others(config, workspace) -> None:
    """The bot's path: re-render one config, keep every other cell as decoded (proven)."""
    out = workspace["out"]
    path = out / f"{MODEL}.jsx"
    before = load_decoder(path)
    kw = {"config": config, "inferencex": ROOT / "examples" / "inferencex", "out_dir": out}
    same = generate_model(MODEL, only=DISAGG, check=True, **kw)
    assert not same.changed
    pinned = dataclasses.replace(config.pins()[DISAGG], run="41000000999", status="verified-pr")

    def renderer(root: Path, key: str):
        assert key == DISAGG, "only the refreshed config is rendered"
        return render_config(root, key)

    result = generate_model(
        MODEL, only=DISAGG, pins={DISAGG: pinned}, today="2026-12-01", renderer=renderer, **kw
    )
    assert result.changed
    after = load_decoder(path)
    assert [c["id"] for c in after.data["cells"]] == [c["id"] for c in before.data["cells"]]
    old_cases = {(c.cell_id, c.point, c.router, c.kv): c for c in before.cases()}
    statuses = set()
    for case in after.cases():
        old = old_cases[(case.cell_id, case.point, case.router, case.kv)]
        assert case.blocks == old.blocks
        if case.cell_id.startswith(DISAGG):
            statuses.add(case.status)
        else:
            assert case.status == old.status
    assert statuses == {"verified-pr", "derived"}


def test_refresh_proof_catches_a_changed_kept_cell(config, workspace, monkeypatch) -> None:
    """A kept cell that would decode differently from the published module is refused."""
    from syncer.encoder import edit as edit_mod

    real = edit_mod._Editor.edited

    def tampered(self):
        value = real(self)
        kept = next(c for c in value["cells"] if not c["id"].startswith(DISAGG))
        for entry in kept["routers"]["sglang"]["blocks"]:
            for arg in entry.get("args") or []:
                if isinstance(arg, list) and arg[0] == "--watchdog-timeout":
                    arg[1:] = ["99"]
        return value

    monkeypatch.setattr(edit_mod._Editor, "edited", tampered)
    path = workspace["out"] / f"{MODEL}.jsx"
    before = path.read_text(encoding="utf-8")
    with pytest.raises(SyncError, match="--watchdog-timeout"):
        generate_model(
            MODEL, only=DISAGG, config=config, inferencex=ROOT / "examples" / "inferencex",
            out_dir=workspace["out"],
        )  # fmt: skip
    assert path.read_text(encoding="utf-8") == before


def test_generate_all_writes_every_model_or_none(tmp_path: Path) -> None:
    # Issue 12.6: `generate --all` whose second model cannot be written had already rewritten
    # the first model's module and page.
    text = (ROOT / "sync.yaml").read_text(encoding="utf-8")
    first, disagg = text.split("      # No authorised run yet", 1)
    first = first.replace(f"hicache: {DISAGG}", "hicache: null")
    second = (
        "  - path: acme/second\n    model: Second\n    page: docs/second.mdx\n"
        "    section: Agentic Long-Context Deployment\n"
        "    hardware:\n      - {id: gb300, label: GB300}\n"
        f"    kv_donors:\n      hicache: {DISAGG}\n      mooncake: null\n    configs:\n"
        "      # No authorised run yet" + disagg
    )
    config = tmp_path / "sync.yaml"
    config.write_text(first + second, encoding="utf-8")
    pages = tmp_path / "cookbook"
    (pages / PAGE).parent.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "cookbook" / PAGE, pages / PAGE)
    (pages / "docs/second.mdx").write_text("# Second\n", encoding="utf-8")
    out = tmp_path / "snippets"
    (out / "deepseek-ai").mkdir(parents=True)
    shutil.copy(ROOT / "cookbook_snippets" / f"{MODEL}.jsx", out / f"{MODEL}.jsx")
    (out / "acme").write_text("a file where the second model's folder goes\n")
    before = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    argv = ["generate", "--all", "--config", str(config), "--inferencex",
            str(ROOT / "examples/inferencex"), "--out", str(out), "--pages", str(pages),
            "--date", "2031-01-02"]  # fmt: skip
    assert run_cli(*argv) == 2
    after = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    assert after == before  # not the first model's module, not its page, no temp file
    # With the obstacle gone the same command writes both models.
    (out / "acme").unlink()
    assert run_cli(*argv) == 0
    assert (out / "acme/second.jsx").is_file()
    assert (out / f"{MODEL}.jsx").read_bytes() != before[out / f"{MODEL}.jsx"]
    assert (pages / "docs/second.mdx").read_text(encoding="utf-8") != "# Second\n"


def test_a_spec_is_encoded_once_per_process_and_its_text_is_the_same(config, monkeypatch) -> None:
    """The bot generates a model for its trial verify and again for the publish: the second
    generation of the same spec reuses the first encoding, text for text; another spec (here
    another date) is encoded anew, and a kept old date is applied to a copy of the shared
    value, never to it."""
    from syncer.encoder import encode
    from syncer.recent import Recent
    from syncer.usecases import generate as generate_usecase

    monkeypatch.setattr(generate_usecase, "_ENCODED", Recent(8))
    real, calls = encode.compact_module, []

    def counting(spec):
        calls.append(spec.generated_on)
        return real(spec)

    monkeypatch.setattr(encode, "compact_module", counting)

    def generated(today: str) -> str:
        return generate_model(
            MODEL, config=config, inferencex=ROOT / "examples" / "inferencex",
            out_dir=ROOT / "cookbook_snippets", check=True, today=today,
        ).text  # fmt: skip

    committed = (ROOT / "cookbook_snippets" / f"{MODEL}.jsx").read_text(encoding="utf-8")
    # Another date than the module's: only the date would change, so the committed text.
    assert generated("2031-01-02") == committed
    assert generated("2031-01-02") == committed
    assert calls == ["2031-01-02"]
    [(value, _, _)] = generate_usecase._ENCODED.values()
    assert value["generatedOn"] == "2031-01-02"  # the shared value kept its own date
    assert generated("2031-01-03") == committed
    assert calls == ["2031-01-02", "2031-01-03"]
