module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<7x7xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<4x6xf32>, tensor<i32>) -> tensor<7x7xf32>
    return %0 : tensor<7x7xf32>
  }
  func.func private @_pad(%arg0: tensor<4x6xf32>, %arg1: tensor<i32>) -> tensor<7x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [2, 1], interior = [0, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<7x7xf32>
    return %1 : tensor<7x7xf32>
  }
}
