"""Regenerate the StableHLO / HLO pairs of this folder (needs jax: `pip install -e '.[jax]'`).

    python tests/data/stablehlo/generate.py

For each program, `NAME.mlir` is `jax.jit(f).lower(*args).as_text()` (StableHLO, what JAX
prints by default) and `NAME.hlo` is `.as_text(dialect="hlo")` of the same lowering (XLA's own
conversion of it to HLO). tests/test_stablehlo.py checks that hloidx reads the same maps from
both. Running the tests needs neither jax nor this script.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

HERE = Path(__file__).resolve().parent
f32 = jnp.float32


def ones(*shape, dtype=f32):
    return jnp.ones(shape, dtype)


def programs():
    a46, b46 = ones(4, 6), ones(4, 6)
    yield ("elementwise", lambda x, y: jnp.tanh(x) * y + 1.0, (a46, b46))
    yield ("unary_chain", lambda x: jnp.sqrt(jnp.abs(jnp.exp(-x))), (a46,))
    yield ("compare_select", lambda x, y: jnp.where(x > y, x, y), (a46, b46))
    yield ("clamp", lambda x: jnp.clip(x, 0.0, 1.0), (a46,))
    yield ("convert", lambda x: (x * 3).astype(jnp.int32), (a46,))
    yield ("broadcast_row", lambda x: x[None, :] + jnp.zeros((3, 4)), (ones(4),))
    yield ("broadcast_degenerate", lambda x: x + jnp.zeros((4, 6)), (ones(4, 1),))
    yield ("reshape", lambda x: x.reshape(8, 3), (a46,))
    yield ("reshape_3d", lambda x: x.reshape(2, 3, 4).reshape(6, 4), (ones(4, 6),))
    yield ("transpose", lambda x: x.T, (a46,))
    yield ("transpose_3d", lambda x: jnp.transpose(x, (2, 0, 1)), (ones(2, 3, 4),))
    yield ("slice", lambda x: x[1:3, ::2], (a46,))
    yield ("slice_negative_step", lambda x: x[::-1, 1:], (a46,))
    yield ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1))), (a46,))
    yield ("pad_interior", lambda x: lax.pad(x, 0.0, ((1, 2, 1), (0, 1, 0))), (a46,))
    yield ("concatenate", lambda x, y: jnp.concatenate([x, y], axis=1), (a46, ones(4, 2)))
    yield ("reduce_sum", lambda x: jnp.sum(x, axis=1), (a46,))
    yield ("reduce_all_axes", lambda x: jnp.max(x), (a46,))
    yield ("argmax", lambda x: jnp.argmax(x, axis=0), (a46,))
    yield (
        "reduce_window_sum",
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), "VALID"),
        (ones(6, 8),),
    )
    yield (
        "max_pool",
        lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"),
        (ones(1, 6, 6, 3),),
    )
    yield ("cumsum", lambda x: jnp.cumsum(x), (ones(10),))
    yield ("dot", lambda x, y: x @ y, (a46, ones(6, 3)))
    yield ("matvec", lambda x, y: x @ y, (a46, ones(6)))
    yield (
        "batch_dot",
        lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
        (ones(2, 4, 6), ones(2, 6, 3)),
    )
    yield (
        "conv_same",
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        ),
        (ones(1, 8, 8, 3), ones(3, 3, 3, 4)),
    )
    yield (
        "conv_strided_dilated",
        lambda x, w: lax.conv_general_dilated(
            x, w, (2, 2), "VALID", rhs_dilation=(2, 1), dimension_numbers=("NCHW", "OIHW", "NCHW")
        ),
        (ones(1, 2, 12, 10), ones(4, 2, 3, 3)),
    )
    yield (
        "conv_grouped",
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "VALID", feature_group_count=2, dimension_numbers=("NHWC", "HWIO", "NHWC")
        ),
        (ones(1, 6, 6, 4), ones(3, 3, 2, 6)),
    )
    yield ("gather_rows", lambda x, i: x[i], (ones(5, 4), jnp.array([0, 2, 4])))
    yield (
        "take_along_axis",
        lambda x, i: jnp.take_along_axis(x, i, axis=1),
        (ones(3, 5), jnp.zeros((3, 2), jnp.int32)),
    )
    yield (
        "scatter_add",
        lambda x, i, u: x.at[i].add(u),
        (ones(5, 4), jnp.array([0, 2]), ones(2, 4)),
    )
    yield (
        "scatter_set",
        lambda x, i, u: x.at[i, 1].set(u),
        (ones(5, 4), jnp.array([1, 3]), ones(2)),
    )
    yield (
        "dynamic_slice",
        lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 4)),
        (ones(5, 4), jnp.array(1)),
    )
    yield (
        "dynamic_update_slice",
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
        (ones(5, 4), ones(2, 4), jnp.array(1)),
    )
    yield ("sort", lambda x: jnp.sort(x, axis=1), (a46,))
    yield ("argsort", lambda x: jnp.argsort(x, axis=0), (a46,))
    yield ("iota", lambda x: x + jnp.arange(6), (a46,))
    yield ("reverse", lambda x: jnp.flip(x, 0), (a46,))
    yield ("fori_loop", lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x), (ones(4),))
    yield (
        "while_capture",
        lambda x, y: lax.fori_loop(0, 3, lambda i, c: c + y, x),
        (ones(4), ones(4)),
    )
    yield ("scan", lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x)[1], (ones(6),))
    yield (
        "cond",
        lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v * 2.0, x),
        (jnp.array(True), ones(4)),
    )
    yield (
        "switch",
        lambda i, x: lax.switch(i, [lambda v: v, lambda v: v * 2, lambda v: -v], x),
        (jnp.array(1), ones(4)),
    )
    yield ("call", lambda x: jax.jit(lambda y: y * 3.0)(x) + 1.0, (ones(4),))
    yield ("softmax", lambda x: jax.nn.softmax(x, axis=-1), (a46,))
    yield (
        "layer_norm",
        lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5),
        (a46,),
    )
    yield (
        "attention",
        lambda q, k, v: jax.nn.softmax(q @ k.T / 8.0, axis=-1) @ v,
        (ones(4, 8), ones(5, 8), ones(5, 8)),
    )
    yield ("one_hot", lambda i: jax.nn.one_hot(i, 5), (jnp.array([0, 3, 1]),))
    yield ("roll", lambda x: jnp.roll(x, 2, axis=1), (a46,))
    yield ("tile_repeat", lambda x: jnp.repeat(jnp.tile(x, (2, 1)), 2, axis=1), (ones(2, 3),))
    yield ("erf", lambda x: jax.scipy.special.erf(x), (ones(4),))


def main() -> None:
    count = 0
    for name, fn, args in programs():
        lowered = jax.jit(fn).lower(*args)
        (HERE / f"{name}.mlir").write_text(lowered.as_text())
        (HERE / f"{name}.hlo").write_text(lowered.as_text(dialect="hlo"))
        count += 1
    print(f"{count} programs written with jax {jax.__version__}")


if __name__ == "__main__":
    main()
