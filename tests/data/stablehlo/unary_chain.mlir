module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.negate %arg0 : tensor<4x6xf32>
    %1 = stablehlo.exponential %0 : tensor<4x6xf32>
    %2 = stablehlo.abs %1 : tensor<4x6xf32>
    %3 = stablehlo.sqrt %2 : tensor<4x6xf32>
    return %3 : tensor<4x6xf32>
  }
}
