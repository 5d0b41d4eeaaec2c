module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<i32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0, %iterArg_1 = %arg0) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    cond {
      %c_2 = stablehlo.constant dense<5> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
      %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %3 = stablehlo.multiply %iterArg_0, %2 : tensor<4xf32>
      %4 = stablehlo.add %iterArg_1, %iterArg_0 : tensor<4xf32>
      stablehlo.return %1, %3, %4 : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    }
    return %0#0, %0#1, %0#2 : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
}
