module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = call @_roll_static(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
  func.func private @_roll_static(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.slice %arg0 [0:4, 4:6] : (tensor<4x6xf32>) -> tensor<4x2xf32>
    %1 = stablehlo.slice %arg0 [0:4, 0:4] : (tensor<4x6xf32>) -> tensor<4x4xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 1 : (tensor<4x2xf32>, tensor<4x4xf32>) -> tensor<4x6xf32>
    return %2 : tensor<4x6xf32>
  }
}
