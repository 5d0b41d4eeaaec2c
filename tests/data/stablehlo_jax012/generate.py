"""Regenerate the StableHLO / HLO pairs of this folder (needs jax: `pip install -e '.[jax]'`).

    python tests/data/stablehlo_jax012/generate.py [OUTDIR]

For each program, `NAME.mlir` is `jax.jit(f).lower(*args).as_text()` (StableHLO, JAX's default
dialect) and `NAME.hlo` is `.as_text(dialect="hlo")` of the same lowering (XLA's own conversion
of it to HLO). The programs are the issue-35 set (a scan, a fori_loop, a cond, argmax, top-k, a
sort with several operands, a multi-output computation, a transformer block) and the corpus
programs of tests/data/corpus, rewritten after their entry signatures.
tests/test_stablehlo_jax012.py analyses them; running the tests needs neither jax nor this
script.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

HERE = Path(__file__).resolve().parent


def arr(*shape, dtype=jnp.float32, seed=0):
    return jax.random.normal(jax.random.PRNGKey(seed), shape).astype(dtype)


def layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def mlp(params, x):
    (w1, b1), (w2, b2), (w3, b3) = params["layers"]
    h = jax.nn.gelu(layernorm(x @ w1 + b1, params["g1"], params["b1"]))
    h = jax.nn.gelu(layernorm(h @ w2 + b2, params["g2"], params["b2"]))
    return h @ w3 + b3


def transformer_block(p, x, heads=4):
    b, s, d = x.shape
    h = layernorm(x, p["g1"], p["b1"])
    q, k, v = (h @ p[n] + p["b" + n] for n in ("wq", "wk", "wv"))

    def split(t):
        return t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)

    q, k, v = split(q), split(k), split(v)
    att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(d // heads), axis=-1)
    o = (att @ v).transpose(0, 2, 1, 3).reshape(b, s, d) @ p["wo"] + p["bwo"]
    x = x + o
    h = layernorm(x, p["g2"], p["b2"])
    return x + jax.nn.gelu(h @ p["w1"] + p["c1"]) @ p["w2"] + p["c2"]


def cnn(p, x):
    y = lax.conv_general_dilated(
        x, p["k1"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = lax.conv_general_dilated(
        y, p["k2"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    mean = y.mean((0, 1, 2))
    var = y.var((0, 1, 2))
    y = jax.nn.relu((y - mean) * lax.rsqrt(var + 1e-5) * p["g"] + p["b"])
    y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    return y.reshape(y.shape[0], -1) @ p["w"] + p["c"]


def rnn(p, xs, h0):
    def step(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["bh"])
        return h, h @ p["wo"]

    return lax.scan(step, h0, xs)


def misc_sort_scan(x, y):
    values, indices = lax.top_k(y, 5)
    return (
        jnp.cumsum(x, axis=1),
        jnp.sort(x, axis=1),
        jnp.argmax(x, axis=1),
        values,
        indices,
        (lax.cummax(x, axis=1)),
    )


def einsums(a, w, b, c):
    return (
        jnp.einsum("ij,ij->i", a, a @ w),
        jnp.einsum("bij,bjk->bik", b, b),
        jnp.einsum("bij,bij->", b, b),
        jnp.einsum("bij,bjk->bik", b, c),
        jnp.einsum("ij,kj->ki", a, w[:2]),
    )


def embed_update(table, ids, grads):
    emb = table[ids].mean(1)
    updated = table.at[ids.reshape(-1)].add(grads.reshape(-1, table.shape[1]))
    return emb, updated, (ids > 3).sum(1, keepdims=True).astype(jnp.float32)


def programs():
    yield (
        "scan",
        lambda x: lax.scan(lambda c, v: (c * 0.5 + v, c * v), jnp.zeros(3), x),
        (arr(6, 3),),
    )
    yield ("fori_loop", lambda x: lax.fori_loop(0, 4, lambda i, c: c * 2.0 + i, x), (arr(4),))
    yield (
        "cond",
        lambda p, x, y: lax.cond(p, lambda a, b: (a + b, a * b), lambda a, b: (a - b, b), x, y),
        (jnp.array(True), arr(4), arr(4, seed=1)),
    )
    yield ("argmax", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), (arr(6, 20),))
    yield ("top_k", lambda x, y: (x + 1.0, *lax.top_k(y, 5)), (arr(3), arr(4, 50)))
    yield ("top_k_3d", lambda y: lax.top_k(y, 2), (arr(2, 3, 7),))
    yield (
        "sort_multi",
        lambda k, a, b: lax.sort((k, a, b), dimension=1, num_keys=1),
        (arr(4, 9), arr(4, 9, seed=1), jnp.arange(36, dtype=jnp.int32).reshape(4, 9)),
    )
    yield ("vmap_topk", jax.vmap(lambda r: lax.top_k(r, 3)), (arr(2, 4, 8),))
    yield ("approx_max_k", lambda a: lax.approx_max_k(a, 3), (arr(4, 8),))
    yield (
        "clz_popcnt",
        lambda a: lax.population_count(a) + lax.clz(a),
        (jnp.arange(8, dtype=jnp.int32),),
    )
    yield ("argsort", lambda x: jnp.argsort(x, axis=1), (arr(4, 9),))
    yield (
        "multi_output",
        lambda x, y: (jnp.sin(x) + y, (x * y).sum(0), jnp.exp(x).max(1), x.T),
        (arr(5, 7), arr(5, 7, seed=1)),
    )
    yield (
        "switch",
        lambda i, x: lax.switch(
            i, [lambda v: (v, v.sum()), lambda v: (v * 2, v.max()), lambda v: (-v, v.min())], x
        ),
        (jnp.array(1), arr(4)),
    )
    yield (
        "while_tuple",
        lambda x: lax.while_loop(
            lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5, c[2] + c[1]), (0, x, x)
        ),
        (arr(4),),
    )
    d, f = 64, 128
    tparams = {
        "g1": arr(d),
        "b1": arr(d),
        "g2": arr(d),
        "b2": arr(d),
        "wq": arr(d, d),
        "wk": arr(d, d),
        "wv": arr(d, d),
        "wo": arr(d, d),
        "bwq": arr(d),
        "bwk": arr(d),
        "bwv": arr(d),
        "bwo": arr(d),
        "w1": arr(d, f),
        "c1": arr(f),
        "w2": arr(f, d),
        "c2": arr(d),
    }
    yield ("transformer_block", transformer_block, (tparams, arr(2, 16, d)))
    mparams = {
        "layers": [(arr(64, 128), arr(128)), (arr(128, 128), arr(128)), (arr(128, 10), arr(10))],
        "g1": arr(128),
        "b1": arr(128),
        "g2": arr(128),
        "b2": arr(128),
    }
    yield ("mlp_layernorm_gelu", mlp, (mparams, arr(8, 64)))
    cparams = {
        "k1": arr(3, 3, 3, 8),
        "k2": arr(3, 3, 8, 16),
        "g": arr(16),
        "b": arr(16),
        "w": arr(256, 10),
        "c": arr(10),
    }
    yield ("cnn_pool_batchnorm", cnn, (cparams, arr(4, 16, 16, 3)))
    rparams = {"wx": arr(8, 32), "wh": arr(32, 32), "bh": arr(32), "wo": arr(32, 4)}
    yield ("rnn_scan", rnn, (rparams, arr(10, 3, 8), arr(3, 32)))
    yield ("cumsum_sort_argmax_topk", misc_sort_scan, (arr(6, 20), arr(4, 50)))
    yield ("einsum_heavy", einsums, (arr(4, 8), arr(8, 8), arr(4, 8, 8), arr(4, 8, 16)))
    yield (
        "embedding_gather_scatter",
        embed_update,
        (arr(50, 16), jnp.arange(24, dtype=jnp.int32).reshape(4, 6) % 50, arr(4, 6, 16)),
    )
    yield (
        "transformer_grad",
        jax.grad(lambda p, x: transformer_block(p, x).sum()),
        (tparams, arr(2, 16, d)),
    )


#: programs also written with their source locations (`debug_info=True`) into debug/
DEBUG = ("argmax", "top_k", "sort_multi", "while_tuple")


def _scrubbed(text: str) -> str:
    """Source locations name this file only, never a path of the machine that wrote them."""
    return re.sub(r'"[^"\n]*/([A-Za-z0-9_.]+\.py)"', r'"\1"', text)


def main(out: Path) -> None:
    count = 0
    for name, fn, args in programs():
        lowered = jax.jit(fn).lower(*args)
        (out / f"{name}.mlir").write_text(lowered.as_text())
        (out / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo"))
        if name in DEBUG:
            (out / "debug").mkdir(exist_ok=True)
            debug = out / "debug" / name
            debug.with_suffix(".debug.mlir").write_text(_scrubbed(lowered.as_text(debug_info=True)))
            hlo = lowered.as_text(dialect="hlo", debug_info=True)
            debug.with_suffix(".debug.hlo").write_text(_scrubbed(hlo))
        count += 1
    print(f"{count} programs written to {out} with jax {jax.__version__}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
