"""Write the CPU-optimized HLO of a 12-layer JAX transformer's training step (issue 44, item 9).

Not an LLM step from XLA's benchmark suite: a module as a JAX user's own code gives it, to
check that the speed of ``hloidx maps`` holds beyond the modules it was tuned on. A decoder of
12 layers, unrolled (a Python loop, no ``lax.scan``): token and position embeddings, pre-layer
norm with scale and bias, causal multi-head attention (8 heads) with biases, a GELU MLP, the
unembedding tied to the embedding, cross-entropy, its gradient and a plain SGD update. Width
256, sequence 128, batch 4, vocabulary 1024. XLA:CPU compiles it; the optimized module text
(``jax.jit(step).lower(...).compile().as_text()``) is written to FILE, gzip-compressed when FILE
ends in ``.gz`` (as ``gzip -9 -n`` does: no name, no time stamp). The stack frames' file
table names this script by its path in the repository, not on the machine that ran it.

    python bench/gen_transformer_step.py bench/data/jax_transformer12_sgd_cpu.hlo.gz
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

LAYERS, WIDTH, HEADS, SEQ, VOCAB, BATCH = 12, 256, 8, 128, 1024, 4


def step_text() -> str:
    import jax
    import jax.numpy as jnp

    def norm(x, scale, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias

    def heads(t):
        return t.reshape(BATCH, SEQ, HEADS, WIDTH // HEADS).transpose(0, 2, 1, 3)

    def block(x, p):
        h = norm(x, p["g1"], p["b1"])
        q, k, v = map(heads, jnp.split(h @ p["wqkv"] + p["bqkv"], 3, axis=-1))
        scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(WIDTH // HEADS)
        scores = jnp.where(jnp.tril(jnp.ones((SEQ, SEQ), bool)), scores, -1e9)
        mixed = (jax.nn.softmax(scores, -1) @ v).transpose(0, 2, 1, 3).reshape(BATCH, SEQ, WIDTH)
        x = x + mixed @ p["wo"] + p["bo"]
        h = norm(x, p["g2"], p["b2"])
        return x + jax.nn.gelu(h @ p["w1"] + p["c1"]) @ p["w2"] + p["c2"]

    def loss(params, tokens, targets):
        x = params["emb"][tokens] + params["pos"]
        for p in params["layers"]:
            x = block(x, p)
        logits = norm(x, params["gf"], params["bf"]) @ params["emb"].T
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.take_along_axis(logp, targets[..., None], -1).mean()

    def step(params, tokens, targets):
        value, grads = jax.value_and_grad(loss)(params, tokens, targets)
        return value, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)

    keys = iter(jax.random.split(jax.random.PRNGKey(0), 8 * LAYERS + 4))

    def normal(shape):
        return jax.random.normal(next(keys), shape) * 0.02

    def layer():
        w = WIDTH
        ones, zeros = jnp.ones(w), jnp.zeros(w)
        return {
            "g1": ones, "b1": zeros, "wqkv": normal((w, 3 * w)), "bqkv": jnp.zeros(3 * w),
            "wo": normal((w, w)), "bo": zeros, "g2": ones, "b2": zeros,
            "w1": normal((w, 4 * w)), "c1": jnp.zeros(4 * w), "w2": normal((4 * w, w)),
            "c2": zeros,
        }  # fmt: skip

    params = {
        "emb": normal((VOCAB, WIDTH)),
        "pos": normal((SEQ, WIDTH)),
        "gf": jnp.ones(WIDTH),
        "bf": jnp.zeros(WIDTH),
        "layers": [layer() for _ in range(LAYERS)],
    }
    tokens = jnp.zeros((BATCH, SEQ), jnp.int32)
    return jax.jit(step).lower(params, tokens, tokens).compile().as_text()


def main() -> None:
    out = Path(sys.argv[1])
    # the stack frames name this script: by its path in the repository, not on this machine
    here = Path(__file__).resolve()
    data = step_text().replace(f'"{here}"', f'"bench/{here.name}"').encode()
    if out.suffix == ".gz":
        out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    else:
        out.write_bytes(data)
    count = sum(1 for line in data.decode().splitlines() if " = " in line)
    print(f"{out}: {count:,} instructions, {len(data):,} bytes uncompressed")


if __name__ == "__main__":
    main()
