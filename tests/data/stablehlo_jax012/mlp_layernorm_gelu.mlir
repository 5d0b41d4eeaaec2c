module @jit_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128xf32>, %arg1: tensor<128xf32>, %arg2: tensor<128xf32>, %arg3: tensor<128xf32>, %arg4: tensor<64x128xf32>, %arg5: tensor<128xf32>, %arg6: tensor<128x128xf32>, %arg7: tensor<128xf32>, %arg8: tensor<128x10xf32>, %arg9: tensor<10xf32>, %arg10: tensor<8x64xf32>) -> (tensor<8x10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg10, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
    %1 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x128xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_0 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %7 = stablehlo.divide %5, %6 : tensor<8x1xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x128xf32>
    %9 = stablehlo.subtract %3, %8 : tensor<8x128xf32>
    %10 = stablehlo.multiply %9, %9 : tensor<8x128xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%10 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_2 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %14 = stablehlo.divide %12, %13 : tensor<8x1xf32>
    %15 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x128xf32>
    %16 = stablehlo.subtract %3, %15 : tensor<8x128xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %18 = stablehlo.add %14, %17 : tensor<8x1xf32>
    %19 = stablehlo.rsqrt %18 : tensor<8x1xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x128xf32>
    %21 = stablehlo.multiply %16, %20 : tensor<8x128xf32>
    %22 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %24 = stablehlo.multiply %21, %23 : tensor<8x128xf32>
    %25 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %27 = stablehlo.add %24, %26 : tensor<8x128xf32>
    %28 = stablehlo.multiply %27, %27 : tensor<8x128xf32>
    %29 = stablehlo.multiply %28, %27 : tensor<8x128xf32>
    %cst_4 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %31 = stablehlo.multiply %30, %29 : tensor<8x128xf32>
    %32 = stablehlo.add %27, %31 : tensor<8x128xf32>
    %cst_5 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %34 = stablehlo.multiply %33, %32 : tensor<8x128xf32>
    %35 = stablehlo.tanh %34 : tensor<8x128xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %37 = stablehlo.add %36, %35 : tensor<8x128xf32>
    %cst_7 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %39 = stablehlo.multiply %38, %37 : tensor<8x128xf32>
    %40 = stablehlo.multiply %27, %39 : tensor<8x128xf32>
    %41 = stablehlo.dot_general %40, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %42 = stablehlo.broadcast_in_dim %arg7, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %44 = stablehlo.add %41, %43 : tensor<8x128xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %45 = stablehlo.reduce(%44 init: %cst_8) applies stablehlo.add across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_9 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %48 = stablehlo.divide %46, %47 : tensor<8x1xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x128xf32>
    %50 = stablehlo.subtract %44, %49 : tensor<8x128xf32>
    %51 = stablehlo.multiply %50, %50 : tensor<8x128xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %52 = stablehlo.reduce(%51 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %cst_11 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %55 = stablehlo.divide %53, %54 : tensor<8x1xf32>
    %56 = stablehlo.broadcast_in_dim %48, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x128xf32>
    %57 = stablehlo.subtract %44, %56 : tensor<8x128xf32>
    %cst_12 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<8x1xf32>
    %59 = stablehlo.add %55, %58 : tensor<8x1xf32>
    %60 = stablehlo.rsqrt %59 : tensor<8x1xf32>
    %61 = stablehlo.broadcast_in_dim %60, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x128xf32>
    %62 = stablehlo.multiply %57, %61 : tensor<8x128xf32>
    %63 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %65 = stablehlo.multiply %62, %64 : tensor<8x128xf32>
    %66 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %68 = stablehlo.add %65, %67 : tensor<8x128xf32>
    %69 = stablehlo.multiply %68, %68 : tensor<8x128xf32>
    %70 = stablehlo.multiply %69, %68 : tensor<8x128xf32>
    %cst_13 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %71 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %72 = stablehlo.multiply %71, %70 : tensor<8x128xf32>
    %73 = stablehlo.add %68, %72 : tensor<8x128xf32>
    %cst_14 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %75 = stablehlo.multiply %74, %73 : tensor<8x128xf32>
    %76 = stablehlo.tanh %75 : tensor<8x128xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %78 = stablehlo.add %77, %76 : tensor<8x128xf32>
    %cst_16 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %80 = stablehlo.multiply %79, %78 : tensor<8x128xf32>
    %81 = stablehlo.multiply %68, %80 : tensor<8x128xf32>
    %82 = stablehlo.dot_general %81, %arg8, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<128x10xf32>) -> tensor<8x10xf32>
    %83 = stablehlo.broadcast_in_dim %arg9, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %84 = stablehlo.broadcast_in_dim %83, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<8x10xf32>
    %85 = stablehlo.add %82, %84 : tensor<8x10xf32>
    return %85 : tensor<8x10xf32>
  }
}
