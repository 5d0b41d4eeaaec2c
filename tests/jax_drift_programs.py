"""Small JAX programs compiled with ``XLA_FLAGS=--xla_dump_to=DIR``, for the drift check
(``tests/test_jax_drift.py``) and for the dumps kept in ``tests/data/jax012/``.

Run as ``python tests/jax_drift_programs.py OUT`` with jax installed: every program is compiled
once (XLA:CPU), XLA writes its dump files to ``OUT/dump``, and beside each module text that XLA
wrote (``*before_optimizations.txt``, ``*after_optimizations.txt``) this writes
``NAME.xla_reprint.hlo``: the same text as jaxlib's own HLO parser reads it and prints it back
(get-tuple-elements spelled out), the drift check's oracle. It also writes, per program,
``OUT/text/PROGRAM.{compiled,lowered,lowered_debug}.hlo``: ``compile().as_text()``,
``lower().as_text(dialect="hlo")`` and the same with ``debug_info=True``, and ``OUT/versions``.
Shapes are small: the whole run takes seconds. ``--keep DATA`` then copies the dumps the tests
keep (:data:`KEPT`) to ``DATA``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path


def programs():
    """``name -> (function, example arguments)``."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    x = jnp.linspace(-1.0, 1.0, 24).reshape(4, 6)

    def scan(xs):  # an RNN: lax.scan is a while loop over a tuple state
        w = jnp.full((6, 6), 0.1)

        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()

        return lax.scan(step, jnp.zeros(6), xs)

    def fori_loop(v):
        return lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, v)

    def cond(v):
        return lax.cond(v.sum() > 0, lambda a: jnp.sin(a), lambda a: jnp.cos(a) * 2, v)

    def argmax(v):  # a variadic reduce (value, index)
        return jnp.argmax(v, axis=1)

    def top_k(v):
        return lax.top_k(v, 3)

    def sort3(v):  # sort with several operands, one key
        return lax.sort((v, v * 2, jnp.arange(24, dtype=jnp.int32).reshape(4, 6)), num_keys=1)

    def multi_output(v):  # a fusion with two outputs (max and argmax), each read on
        e = jnp.exp(v)
        return jnp.max(e, axis=1) * 2, jnp.argmax(e, axis=1) + 1, e.sum(axis=1)

    def transformer(v):
        seq, width, heads = 4, 6, 2
        keys = jax.random.split(jax.random.PRNGKey(0), 6)
        wq, wk, wv, wo = (jax.random.normal(k, (width, width)) * 0.1 for k in keys[:4])
        w1 = jax.random.normal(keys[4], (width, 2 * width)) * 0.1
        w2 = jax.random.normal(keys[5], (2 * width, width)) * 0.1

        def layernorm(t):
            mean = t.mean(-1, keepdims=True)
            return (t - mean) * lax.rsqrt(((t - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

        def split(t):
            return t.reshape(seq, heads, width // heads).transpose(1, 0, 2)

        h = layernorm(v)
        q, k, u = split(h @ wq), split(h @ wk), split(h @ wv)
        att = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(width / heads), axis=-1)
        v = v + (att @ u).transpose(1, 0, 2).reshape(seq, width) @ wo
        return v + jax.nn.gelu(layernorm(v) @ w1) @ w2

    def train_step(v):  # a loss and its gradient: tuples of gradients
        def loss(w):
            return (jnp.tanh(v @ w) ** 2).mean()

        return jax.value_and_grad(loss)(jnp.ones((6, 3)))

    return {
        "scan": (scan, (x,)),
        "fori_loop": (fori_loop, (x,)),
        "cond": (cond, (x,)),
        "argmax": (argmax, (x,)),
        "top_k": (top_k, (x,)),
        "sort3": (sort3, (x,)),
        "multi_output": (multi_output, (x,)),
        "transformer": (transformer, (x,)),
        "train_step": (train_step, (x,)),
    }


def _reprinter():
    """jaxlib's HLO text parser, wherever this jaxlib keeps it: text -> module (or None)."""
    for module_name, attribute in (
        ("jaxlib._hlo", "hlo_module_from_text"),
        ("jax._src.lib", "_jax.hlo_module_from_text"),
        ("jaxlib.xla_extension", "hlo_module_from_text"),
    ):
        try:
            target = __import__(module_name, fromlist=["_"])
            for part in attribute.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError):
            continue
        return target
    return None


def main(out: Path) -> None:
    dump = out / "dump"
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={dump}"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jaxlib

    texts = out / "text"
    texts.mkdir(parents=True, exist_ok=True)
    for name, (function, args) in programs().items():
        lowered = jax.jit(function).lower(*args)
        (texts / f"{name}.lowered.hlo").write_text(lowered.as_text(dialect="hlo"))
        (texts / f"{name}.lowered_debug.hlo").write_text(
            lowered.as_text(dialect="hlo", debug_info=True)
        )
        (texts / f"{name}.compiled.hlo").write_text(lowered.compile().as_text())
    reads = _reprinter()
    for path in sorted(dump.glob("*_optimizations.txt")):
        if reads is not None:
            reprinted = reads(path.read_text()).to_string()
            path.with_name(path.name[: -len(".txt")] + ".xla_reprint.hlo").write_text(reprinted)
    (out / "versions").write_text(
        f"python {sys.version.split()[0]}\njax {jax.__version__}\njaxlib {jaxlib.__version__}\n"
    )


#: The dumps kept in tests/data/jax012/ (with their reprints): small, and between them every
#: form of `#` operand XLA writes (loop states, a conditional's, a two-output fusion's, a sort's)
KEPT = (
    "jit_scan.before_optimizations",
    "jit_scan.cpu_after_optimizations",
    "jit_fori_loop.cpu_after_optimizations",
    "jit_cond.cpu_after_optimizations",
    "jit_multi_output.cpu_after_optimizations",
    "jit_sort3.before_optimizations",
    "jit_top_k.before_optimizations",
)


def keep(out: Path, data: Path) -> None:
    """Copy the :data:`KEPT` dumps of a run in ``out`` to ``data``, the source file paths of
    the FileNames table cut to their base names (no path of the machine that made them)."""
    data.mkdir(parents=True, exist_ok=True)
    for path in sorted((out / "dump").iterdir()):
        if not path.name.endswith(tuple(k + e for k in KEPT for e in (".txt", ".xla_reprint.hlo"))):
            continue
        text = re.sub(r'^(\d+ )"/[^"\n]*/([^"/\n]+)"$', r'\1"\2"', path.read_text(), flags=re.M)
        (data / path.name).write_text(text)
    (data / "versions").write_text((out / "versions").read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
    if len(sys.argv) > 3 and sys.argv[2] == "--keep":
        keep(Path(sys.argv[1]), Path(sys.argv[3]))
