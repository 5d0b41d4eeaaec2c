module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<4x5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:4, 1:6] : (tensor<4x6xf32>) -> tensor<4x5xf32>
    %1 = stablehlo.reverse %0, dims = [0] : tensor<4x5xf32>
    return %1 : tensor<4x5xf32>
  }
}
