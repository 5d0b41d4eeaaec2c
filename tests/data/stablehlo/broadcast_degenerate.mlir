module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x1xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %2 = stablehlo.add %1, %0 : tensor<4x6xf32>
    return %2 : tensor<4x6xf32>
  }
}
