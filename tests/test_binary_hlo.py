"""XLA's binary HLO (``HloProto`` / ``HloModuleProto``; ``*.hlo.pb``, ``*.hlo.pb.xz``) read into
the same IR as text: checked against the text jaxlib prints for the same proto
(``XlaComputation(proto).as_hlo_text()``), committed for real nsys-jax dumps
(``tests/data/binary_hlo/``, its README) and made on the fly over the corpus where jaxlib is
installed."""

from __future__ import annotations

import json
import lzma
import re
import sys

import paths
import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli, main
from hloidx.hlo.binary_hlo import hlo_text_from_bytes
from hloidx.hlo.module_files import find_module_files

DATA = paths.DATA / "binary_hlo"
DUMP = DATA / "pax_dump"
JAXLIB_TEXT = DATA / "jaxlib_text"
DUMPED = sorted(DUMP.glob("*.hlo.pb.xz"))
# backend_config is printed as the proto holds it; jaxlib 0.10.2 re-serialises it through its
# own GpuBackendConfig, which dropped this field (empty in every dump here)
_DROPPED_CONFIG = re.compile(r'"wait_on_operation_queues":\[\],')


def _protobuf() -> None:
    pytest.importorskip("google.protobuf", reason="binary HLO needs protobuf (hloidx[profile])")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _fails(capsys, *args: str) -> tuple[int, list[str]]:
    """Exit code and stderr lines of a run expected to fail, through the program's entry
    point (which turns every error into one line)."""
    with pytest.raises(SystemExit) as stop:
        main(list(args))
    return stop.value.code, capsys.readouterr().err.strip().splitlines()


def _document(command: str, path: str, *extra: str) -> dict:
    code, out, err = _run(command, path, "--format", "json", *extra)
    assert code in (0, 1), err
    return json.loads(out.replace(path, "<file>"))


def _jaxlib_text_of(dumped) -> str:
    return (JAXLIB_TEXT / dumped.name.replace(".hlo.pb.xz", ".hlo")).read_text()


@pytest.mark.parametrize("dumped", DUMPED, ids=lambda p: p.name.split(".")[0] + p.name[-30:])
def test_dumped_module_reads_as_jaxlibs_text(dumped, tmp_path) -> None:
    """A real nsys-jax dump: our text is jaxlib's text, and maps, summary and cost of the
    proto are those of jaxlib's text."""
    _protobuf()
    ours = hlo_text_from_bytes(dumped.read_bytes(), str(dumped))
    assert ours is not None
    jaxlib_text = _jaxlib_text_of(dumped)
    assert _DROPPED_CONFIG.sub("", ours).strip() == jaxlib_text.strip()
    text_file = tmp_path / "module.hlo"
    text_file.write_text(jaxlib_text)
    for command, extra in (("maps", ()), ("summary", ()), ("cost", ("--device", "a100"))):
        assert _document(command, str(dumped), *extra) == _document(
            command, str(text_file), *extra
        ), command


EMBEDDED = sorted((DATA / "xplane_embedded").glob("*.hlo.pb*"))


@pytest.mark.parametrize("proto", EMBEDDED, ids=lambda p: p.name.split(".hlo")[0])
def test_protos_embedded_in_profiles_read_as_jaxlibs_text(proto, tmp_path) -> None:
    """HloProtos a JAX profile embeds (a newer XLA on AMD GPUs: Triton nested GEMM fusions,
    a cuDNN convolution, module frontend attributes that are dictionaries)."""
    _protobuf()
    ours = hlo_text_from_bytes(proto.read_bytes(), proto.name)
    assert ours is not None
    jaxlib_text = (proto.parent / (proto.name.split(".hlo")[0] + ".jaxlib.txt")).read_text()
    assert _DROPPED_CONFIG.sub("", ours).strip() == jaxlib_text.strip()
    text_file = tmp_path / "module.hlo"
    text_file.write_text(jaxlib_text)
    for command in ("maps", "summary"):
        assert _document(command, str(proto)) == _document(command, str(text_file)), command


def test_a_37k_instruction_step_reads_as_jaxlibs_text() -> None:
    """The PAX training step (36,898 printed instructions, ids up to ~460,000): every line is
    the line jaxlib printed for the same proto."""
    _protobuf()
    step = DATA / "pax_step"
    proto = next(step.glob("*.hlo.pb.xz"))
    ours = hlo_text_from_bytes(proto.read_bytes(), str(proto))
    assert ours is not None
    theirs = lzma.decompress((step / "module_0040.jaxlib.hlo.xz").read_bytes()).decode()
    ours_lines = _DROPPED_CONFIG.sub("", ours).strip().splitlines()
    theirs_lines = theirs.strip().splitlines()
    assert len(ours_lines) == len(theirs_lines) == 44486
    different = [i for i, (a, b) in enumerate(zip(ours_lines, theirs_lines, strict=True)) if a != b]
    assert not different, (ours_lines[different[0]][:300], theirs_lines[different[0]][:300])
    from hloidx.protos import hlo_pb2

    module = hlo_pb2.HloProto.FromString(lzma.decompress(proto.read_bytes())).hlo_module
    assert max(i.id for c in module.computations for i in c.instructions) > 400_000


def test_module_proto_and_hlo_proto_read_alike() -> None:
    """``HloProto`` (what XLA dumps) and the bare ``HloModuleProto`` inside it give one text."""
    _protobuf()
    from hloidx.protos import hlo_pb2

    dumped = DUMPED[0]
    raw = lzma.decompress(dumped.read_bytes())
    module = hlo_pb2.HloProto.FromString(raw).hlo_module
    assert max(i.id for c in module.computations for i in c.instructions) >= 1
    bare = hlo_text_from_bytes(module.SerializeToString(), "bare.pb")
    assert bare == hlo_text_from_bytes(raw, "wrapped.pb")
    # bytes held in memory (as a profile embeds them) parse into the module the file gives
    from hloidx.hlo.binary_hlo import module_from_bytes

    parsed = module_from_bytes(raw, "embedded HloProto")
    assert parsed.name == module.name
    assert sum(len(c.instructions) for c in parsed.computations.values()) == sum(
        len(c.instructions) for c in module.computations
    )


def test_every_command_and_the_library_take_a_proto() -> None:
    _protobuf()
    import hloidx

    dumped = str(
        DUMP / "module_0011.jit__threefry_split_original.sm_8.0_gpu_after_optimizations.hlo.pb.xz"
    )
    fusion = "input_concatenate_fusion"
    for args in (
        ("threads", dumped, "--device", "a100"),
        ("coalescing", dumped),
        ("show", dumped, "--instruction", fusion),
        ("tile", dumped, "--instruction", fusion),
        ("check", dumped),
    ):
        code, out, err = _run(*args)
        assert code == 0, (args, err)
        assert fusion in out or "jit__threefry_split_original" in out, args
    analysis = hloidx.analyze(paths.Path(dumped))
    assert analysis.hlo.name == "jit__threefry_split_original"


def test_files_are_recognised_by_content(tmp_path) -> None:
    _protobuf()
    raw = lzma.decompress(DUMPED[0].read_bytes())
    unnamed = tmp_path / "module.bin"  # no name says proto: the bytes do
    unnamed.write_bytes(raw)
    code, out, err = _run("summary", str(unnamed))
    assert code == 0, err
    assert "jit__psum" in out
    piped = CliRunner().invoke(cli, ["summary", "-"], input=DUMPED[0].read_bytes())  # xz on stdin
    assert piped.exit_code == 0, piped.output
    assert "jit__psum" in piped.stdout
    # HLO text that starts with blank lines is still text, xz-compressed text too
    text = "\n\nHloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
    plain = tmp_path / "m.txt"
    plain.write_text(text)
    assert hlo_text_from_bytes(text.encode(), str(plain)) is None
    packed = tmp_path / "m.hlo.xz"
    packed.write_bytes(lzma.compress(text.encode()))
    code, out, err = _run("maps", str(packed))
    assert code == 0, err
    assert "(d0) -> (d0)" in out


@pytest.mark.parametrize(
    ("name", "damage", "says"),
    [
        ("cut.hlo.pb.xz", lambda b: b[: len(b) // 2], "damaged or truncated xz"),
        ("cut.hlo.pb", lambda b: lzma.decompress(b)[:300], "not XLA's binary HLO"),
        ("cut.bin", lambda b: lzma.decompress(b)[:300], "not XLA's binary HLO"),
        ("empty.hlo.pb", lambda b: b"", "empty"),
    ],
)
def test_damaged_inputs_are_one_line_errors(tmp_path, capsys, name, damage, says) -> None:
    _protobuf()
    bad = tmp_path / name
    bad.write_bytes(damage(DUMPED[2].read_bytes()))
    for command in ("maps", "summary", "cost"):
        code, lines = _fails(capsys, command, str(bad))
        assert code == 2, (command, lines)
        assert len(lines) == 1, lines
        assert str(bad) in lines[0]
        assert says in lines[0]
        assert "Traceback" not in lines[0]


def test_without_protobuf_a_proto_says_what_to_install(monkeypatch, capsys) -> None:
    import hloidx.protos

    # its import fails, as without the protobuf package
    monkeypatch.setitem(sys.modules, "hloidx.protos.hlo_pb2", None)
    monkeypatch.delattr(hloidx.protos, "hlo_pb2", raising=False)
    code, lines = _fails(capsys, "maps", str(DUMPED[0]))
    assert code == 2
    assert len(lines) == 1, lines
    assert "pip install -e '.[profile]'" in lines[0]
    assert str(DUMPED[0]) in lines[0]


def test_dump_directories_list_binary_modules_by_stage(tmp_path) -> None:
    after, missing = find_module_files([str(DUMP)], "after")
    assert not missing
    assert [name for name, _ in after] == [
        str(p) for p in DUMPED if "after_optimizations" in p.name
    ]
    before, _ = find_module_files([str(DUMP)], "before")
    assert [name for name, _ in before] == [str(DUMP / DUMPED[0].name)]
    # a dump with both the text and the proto of a module: the text alone
    (tmp_path / "module_0001.jit_f.before_optimizations.txt").write_text("HloModule m\n")
    (tmp_path / "module_0001.jit_f.before_optimizations.hlo.pb").write_bytes(b"\n\x01m")
    (tmp_path / "lone.hlo.pb").write_bytes(b"\n\x01m")
    found, _ = find_module_files([str(tmp_path)])
    assert sorted(p.rsplit("/", 1)[1] for p, _ in found) == [
        "lone.hlo.pb",
        "module_0001.jit_f.before_optimizations.txt",
    ]


def test_maps_of_a_dump_directory_reads_its_protos() -> None:
    _protobuf()
    code, out, err = _run("maps", str(DUMP), "--stage", "after", "--format", "json")
    assert code in (0, 1), err
    assert "jit__threefry_split_original" in out


# ---------------------------------------------------------------------------------------------
# Over the corpus, with jaxlib: text -> XLA's proto -> our text == jaxlib's text of that proto
# ---------------------------------------------------------------------------------------------

CORPUS = sorted(
    [
        *paths.CORPUS.glob("*.hlo"),
        *paths.SAMPLES.rglob("*.hlo"),
        DATA / "many_ops.hlo",
    ]
)


def _jaxlib():
    jaxlib = pytest.importorskip("jaxlib", reason="XLA's printer needs jaxlib (optional)")
    from jaxlib import _hlo

    del jaxlib
    return _hlo


def test_corpus_protos_read_as_jaxlibs_text() -> None:
    """Every corpus module and sample: XLA's parser makes the proto, XLA's printer its text,
    and ours is that text, byte for byte (one test: a module's proto is made in C++ fast)."""
    _protobuf()
    xla = _jaxlib()
    checked = 0
    for path in CORPUS:
        try:
            proto = xla.hlo_module_from_text(path.read_text()).as_serialized_hlo_module_proto()
        except Exception:  # a sample XLA itself rejects has no proto
            continue
        theirs = xla.XlaComputation(proto).as_hlo_text()
        ours = hlo_text_from_bytes(proto, path.name + ".pb")
        assert ours is not None
        assert ours.strip() == theirs.strip(), path.name
        checked += 1
    assert checked >= 55


@pytest.mark.parametrize(
    "name", ["rnn_scan.opt.hlo", "embedding_gather_scatter.opt.hlo", "many_ops.hlo"]
)
def test_corpus_analyses_of_proto_and_jaxlib_text_agree(name, tmp_path) -> None:
    _protobuf()
    xla = _jaxlib()
    source = DATA / name if name == "many_ops.hlo" else paths.CORPUS / name
    proto = xla.hlo_module_from_text(source.read_text()).as_serialized_hlo_module_proto()
    proto_file = tmp_path / "module.hlo.pb"
    proto_file.write_bytes(proto)
    text_file = tmp_path / "module.hlo"
    text_file.write_text(xla.XlaComputation(proto).as_hlo_text())
    commands = [("maps", ()), ("summary", ())]
    if name != "many_ops.hlo":  # its custom-call's string backend_config stops `cost` today
        commands.append(("cost", ("--device", "h100")))
    for command, extra in commands:
        ours = _document(command, str(proto_file), *extra)
        assert ours == _document(command, str(text_file), *extra), command
