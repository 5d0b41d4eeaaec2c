"""The GPU view (seed 001): which emitter XLA:GPU uses for a fusion, its launch
configuration, the thread-id maps ``(th_x, th_y, th_z, bl_x, bl_y, bl_z)[chunk_id,
unroll_id]`` to the output and operand elements, and whether each operand's reads are
coalesced — all without a GPU.

Modules: ``devices`` (device profiles), ``emitter_choice`` (the emitter XLA picks),
``emitter_interface`` (what every emitter model offers), ``emitters`` (the one place that
picks the model), the models ``loops``, ``reductions`` (with ``reduction_groups``),
``transposes``, ``scatters``; what they share: ``launch_config``, ``grid``, ``thread_reads``;
``launch`` (launch configurations), ``thread_maps`` (thread-id maps, addresses, warps),
``coalescing`` (XLA's verdict and measured figures), ``analysis`` (per fusion, per module),
``report`` (JSON documents).
"""
