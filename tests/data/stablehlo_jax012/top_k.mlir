module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<4x50xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}, tensor<4x5xi32> {jax.result_info = "result[2]"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<3xf32>
    %values, %indices = chlo.top_k(%arg1, k = 5) : tensor<4x50xf32> -> (tensor<4x5xf32>, tensor<4x5xi32>)
    return %1, %values, %indices : tensor<3xf32>, tensor<4x5xf32>, tensor<4x5xi32>
  }
}
