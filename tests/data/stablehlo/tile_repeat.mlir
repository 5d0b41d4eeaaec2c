module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<1x2x1x3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2, 3] : (tensor<1x2x1x3xf32>) -> tensor<2x2x1x3xf32>
    %2 = stablehlo.reshape %1 : (tensor<2x2x1x3xf32>) -> tensor<4x3xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x3xf32>) -> tensor<4x3x2xf32>
    %4 = stablehlo.reshape %3 : (tensor<4x3x2xf32>) -> tensor<4x6xf32>
    return %4 : tensor<4x6xf32>
  }
}
