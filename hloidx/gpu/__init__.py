"""The GPU view (seed 001): which emitter XLA:GPU uses for a fusion, its launch
configuration, the thread-id maps ``(th_x, th_y, th_z, bl_x, bl_y, bl_z)[chunk_id,
unroll_id]`` to the output and operand elements, and whether each operand's reads are
coalesced — all without a GPU.

Modules: ``devices`` (device profiles), ``emitters`` (the emitter choice), ``launch``
(launch configurations), ``thread_maps`` (thread-id maps), ``coalescing`` (XLA's verdict and
measured figures), ``analysis`` (per fusion, per module), ``report`` (JSON documents).
"""
