module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<6xi32>
    %1 = stablehlo.convert %0 : (tensor<6xi32>) -> tensor<6xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %4 = stablehlo.add %arg0, %3 : tensor<4x6xf32>
    return %4 : tensor<4x6xf32>
  }
}
