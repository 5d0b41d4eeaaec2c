module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x4xf32>, %arg1: tensor<2x4xf32>, %arg2: tensor<i32>) -> (tensor<5x4xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg2, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = stablehlo.convert %arg2 : tensor<i32>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.add %1, %c_0 : tensor<i32>
    %3 = stablehlo.select %0, %2, %arg2 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.dynamic_update_slice %arg0, %arg1, %3, %c_1 : (tensor<5x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<5x4xf32>
    return %4 : tensor<5x4xf32>
  }
}
