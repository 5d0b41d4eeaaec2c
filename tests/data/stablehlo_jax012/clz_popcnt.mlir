module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xi32>) -> (tensor<8xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.popcnt %arg0 : tensor<8xi32>
    %1 = stablehlo.count_leading_zeros %arg0 : tensor<8xi32>
    %2 = stablehlo.add %0, %1 : tensor<8xi32>
    return %2 : tensor<8xi32>
  }
}
