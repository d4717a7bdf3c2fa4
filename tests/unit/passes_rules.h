/* tests/unit/passes_rules.h — one before/after case per simplifier rule, for
 * test_passes.c: { rule, graph, golden ir_print after simplify }.  Each
 * golden was checked by hand against the rule's algebra; the test also
 * runs both graphs through the interpreter (rtol 1e-5). */
{ "silu",
  "x = input f32 [2,3]; s = Sigmoid x; t = Mul x s; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Swish(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "hardswish",
  "x = input f32 [2,3]; s = HardSigmoid x {alpha=0.16666667 beta=0.5}; t = Mul s x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = HardSwish(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "mul_one",
  "x = input f32 [2,3]; o = const f32 [] 1; t = Mul o x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "add_zero",
  "x = input f32 [2,3]; z = const f32 [3] 0; t = Add x z; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "sub_zero",
  "x = input f32 [2,3]; z = const f32 [] 0; t = Sub x z; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "div_one",
  "x = input f32 [2,3]; o = const f32 [] 1; t = Div x o; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "pow_one",
  "x = input f32 [2,3]; o = const f32 [] 1; t = Pow x o; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "mul_neg_one",
  "x = input f32 [2,3]; o = const f32 [] -1; t = Mul x o; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Neg(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "div_neg_one",
  "x = input f32 [2,3]; o = const f32 [] -1; t = Div x o; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Neg(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "zero_sub",
  "x = input f32 [2,3]; z = const f32 [] 0; t = Sub z x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Neg(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "neg_neg",
  "x = input f32 [2,3]; a = Neg x; t = Neg a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "add_neg",
  "x = input f32 [2,3]; w = input f32 [2,3]; a = Neg w; t = Add a x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  input %w: float32[2,3]\n"
  "  %t__0: float32[2,3] = Sub(%x, %w)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "sub_neg",
  "x = input f32 [2,3]; w = input f32 [2,3]; a = Neg w; t = Sub x a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  input %w: float32[2,3]\n"
  "  %t__0: float32[2,3] = Add(%x, %w)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "neg_sub",
  "x = input f32 [2,3]; w = input f32 [2,3]; a = Sub x w; t = Neg a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  input %w: float32[2,3]\n"
  "  %t__0: float32[2,3] = Sub(%w, %x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "abs_neg",
  "x = input f32 [2,3]; a = Neg x; t = Abs a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Abs(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "pow_two",
  "x = input f32 [2,3]; e = const f32 [] 2; t = Pow x e; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Mul(%x, %x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "pow_half",
  "x = input f32 [2,3]; e = const f32 [] 0.5; t = Pow x e; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Sqrt(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "pow_neg_one",
  "x = input f32 [2,3]; e = const f32 [] -1; t = Pow x e; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Reciprocal(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "div_one_by",
  "x = input f32 [2,3]; o = const f32 [] 1; t = Div o x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Reciprocal(%x)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "add_self",
  "x = input f32 [2,3]; t = Add x x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %c__0: float32[] = {2}\n"
  "  %t__0: float32[2,3] = Mul(%x, %c__0)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "sub_const",
  "x = input f32 [2,3]; c = const f32 [3] 1,2,3; t = Sub x c; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %t__0: float32[3] = {-1, -2, -3}\n"
  "  %t__1: float32[2,3] = Add(%x, %t__0)  # t\n"
  "  %y: float32[2,3] = Relu(%t__1)\n"
  "  return %y\n"
  "}\n" },
{ "div_const",
  "x = input f32 [2,3]; c = const f32 [3] 2,4,-8; t = Div x c; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %t__0: float32[3] = {0.5, 0.25, -0.125}\n"
  "  %t__1: float32[2,3] = Mul(%x, %t__0)  # t\n"
  "  %y: float32[2,3] = Relu(%t__1)\n"
  "  return %y\n"
  "}\n" },
{ "mul_mul_const",
  "x = input f32 [2,3]; a = const f32 [] 2; b = const f32 [3] 1,2,3; m = Mul a x; t = Mul m b; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %t__0: float32[3] = {2, 4, 6}\n"
  "  %t__1: float32[2,3] = Mul(%x, %t__0)  # t\n"
  "  %y: float32[2,3] = Relu(%t__1)\n"
  "  return %y\n"
  "}\n" },
{ "add_add_const",
  "x = input f32 [2,3]; a = const f32 [] 2; b = const f32 [3] 1,2,3; m = Add x a; t = Add b m; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %t__0: float32[3] = {3, 4, 5}\n"
  "  %t__1: float32[2,3] = Add(%x, %t__0)  # t\n"
  "  %y: float32[2,3] = Relu(%t__1)\n"
  "  return %y\n"
  "}\n" },
{ "add_mul_const",
  "x = input f32 [2,3]; a = const f32 [3] 1,2,3; b = const f32 [] 2; m = Add x a; t = Mul m b; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %b: float32[] = {2}\n"
  "  const %t__1: float32[3] = {2, 4, 6}\n"
  "  %t__0: float32[2,3] = Mul(%x, %b)  # t\n"
  "  %t__2: float32[2,3] = Add(%t__0, %t__1)  # t\n"
  "  %y: float32[2,3] = Relu(%t__2)\n"
  "  return %y\n"
  "}\n" },
{ "relu_relu",
  "x = input f32 [2,3]; a = Relu x; t = Relu a; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %a: float32[2,3] = Relu(%x)\n"
  "  %y: float32[2,3] = Exp(%a)\n"
  "  return %y\n"
  "}\n" },
{ "abs_abs",
  "x = input f32 [2,3]; a = Abs x; t = Abs a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %a: float32[2,3] = Abs(%x)\n"
  "  %y: float32[2,3] = Relu(%a)\n"
  "  return %y\n"
  "}\n" },
{ "floor_floor",
  "x = input f32 [2,3]; a = Floor x; t = Floor a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %a: float32[2,3] = Floor(%x)\n"
  "  %y: float32[2,3] = Relu(%a)\n"
  "  return %y\n"
  "}\n" },
{ "ceil_ceil",
  "x = input f32 [2,3]; a = Ceil x; t = Ceil a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %a: float32[2,3] = Ceil(%x)\n"
  "  %y: float32[2,3] = Relu(%a)\n"
  "  return %y\n"
  "}\n" },
{ "round_round",
  "x = input f32 [2,3]; a = Round x; t = Round a; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %a: float32[2,3] = Round(%x)\n"
  "  %y: float32[2,3] = Relu(%a)\n"
  "  return %y\n"
  "}\n" },
{ "not_not",
  "x = input bool [2,3]; a = Not x; t = Not a; y = Cast t {to=1}; out y",
  "graph t (opset 21) {\n"
  "  input %x: bool[2,3]\n"
  "  %y: float32[2,3] = Cast(%x) {to=1}\n"
  "  return %y\n"
  "}\n" },
{ "max_zero",
  "x = input f32 [2,3]; z = const f32 [] 0; t = Max x z; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float32[2,3] = Relu(%x)  # t\n"
  "  %y: float32[2,3] = Exp(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "max_const",
  "x = input f32 [2,3]; c = const f32 [1] -0.5; t = Max c x; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %min__0: float32[] = {-0.5}\n"
  "  %t__0: float32[2,3] = Clip(%x, %min__0)  # t\n"
  "  %y: float32[2,3] = Exp(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "min_const",
  "x = input f32 [2,3]; c = const f32 [] 0.5; t = Min x c; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %max__0: float32[] = {0.5}\n"
  "  %t__0: float32[2,3] = Clip(%x, _, %max__0)  # t\n"
  "  %y: float32[2,3] = Exp(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "clip_relu",
  "x = input f32 [2,3]; lo = const f32 [] -1; hi = const f32 [] 6; a = Relu x; t = Clip a lo hi; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %min__0: float32[] = {0}\n"
  "  const %max__0: float32[] = {6}\n"
  "  %t__0: float32[2,3] = Clip(%x, %min__0, %max__0)  # t\n"
  "  %y: float32[2,3] = Exp(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "relu_clip",
  "x = input f32 [2,3]; lo = const f32 [] -1; hi = const f32 [] 1; a = Clip x lo hi; t = Relu a; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %min__0: float32[] = {0}\n"
  "  const %max__0: float32[] = {1}\n"
  "  %t__0: float32[2,3] = Clip(%x, %min__0, %max__0)  # t\n"
  "  %y: float32[2,3] = Exp(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "clip_clip",
  "x = input f32 [2,3]; a0 = const f32 [] -1; b0 = const f32 [] 1; c0 = const f32 [] 0; e0 = const f32 [] 2; a = Clip x a0 b0; t = Clip a c0 e0; y = Exp t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %min__0: float32[] = {0}\n"
  "  const %max__0: float32[] = {1}\n"
  "  %t__0: float32[2,3] = Clip(%x, %min__0, %max__0)  # t\n"
  "  %y: float32[2,3] = Exp(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "cast_same",
  "x = input f32 [2,3]; t = Cast x {to=1}; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "cast_cast",
  "x = input f32 [2,3]; a = Cast x {to=11}; t = Cast a {to=10}; y = Cast t {to=1}; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %t__0: float16[2,3] = Cast(%x) {to=10}  # t\n"
  "  %y: float32[2,3] = Cast(%t__0) {to=1}\n"
  "  return %y\n"
  "}\n" },
{ "transpose_id",
  "x = input f32 [2,3]; t = Transpose x {perm=0,1}; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "transpose_transpose",
  "x = input f32 [2,3,4]; a = Transpose x {perm=1,0,2}; t = Transpose a {perm=0,2,1}; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3,4]\n"
  "  %t__0: float32[3,4,2] = Transpose(%x) {perm=[1,2,0]}  # t\n"
  "  %y: float32[3,4,2] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "unsqueeze_squeeze",
  "x = input f32 [2,1,3]; ax = const i64 [1] 1; a = Squeeze x ax; t = Unsqueeze a ax; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,1,3]\n"
  "  %y: float32[2,1,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "squeeze_unsqueeze",
  "x = input f32 [2,3]; ax = const i64 [1] 0; a = Unsqueeze x ax; t = Squeeze a ax; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "view_same",
  "x = input f32 [2,3]; s = const i64 [2] 2,-1; t = Reshape x s; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "view_view",
  "x = input f32 [2,3,4]; s = const i64 [2] 6,4; a = Reshape x s; t = Flatten a {axis=0}; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3,4]\n"
  "  const %shape__0: int64[2] = {1, 24}\n"
  "  %t__0: float32[1,24] = Reshape(%x, %shape__0)  # t\n"
  "  %y: float32[1,24] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "expand_same",
  "x = input f32 [2,3]; s = const i64 [2] 1,3; t = Expand x s; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "tile_same",
  "x = input f32 [2,3]; r = const i64 [2] 1,1; t = Tile x r; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "pad_zero",
  "x = input f32 [2,3]; p = const i64 [4] 0,0,0,0; t = Pad x p; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "slice_all",
  "x = input f32 [2,3]; s = const i64 [1] 0; e = const i64 [1] 100; ax = const i64 [1] 1; t = Slice x s e ax; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "concat_one",
  "x = input f32 [2,3]; t = Concat x {axis=1}; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "sum_one",
  "x = input f32 [2,3]; t = Sum x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "max_one",
  "x = input f32 [2,3]; t = Max x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "min_one",
  "x = input f32 [2,3]; t = Min x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "mean_one",
  "x = input f32 [2,3]; t = Mean x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  %y: float32[2,3] = Relu(%x)\n"
  "  return %y\n"
  "}\n" },
{ "gemm_trans_a",
  "x = input f32 [2,3]; b = const f32 [2,4] 1; a = Transpose x {perm=1,0}; t = Gemm a b; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %b: float32[2,4] = {1, 1, 1, 1, 1, 1, 1, 1}\n"
  "  %t__0: float32[3,4] = Gemm(%x, %b) {transA=1}  # t\n"
  "  %y: float32[3,4] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "gemm_trans_b",
  "x = input f32 [2,3]; w = input f32 [4,3]; b = Transpose w {perm=1,0}; t = Gemm x b {transB=0 alpha=2}; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  input %w: float32[4,3]\n"
  "  %t__0: float32[2,4] = Gemm(%x, %w) {transB=1, alpha=2}  # t\n"
  "  %y: float32[2,4] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "matmul_trans_a",
  "x = input f32 [2,3]; b = const f32 [2,4] 1; a = Transpose x {perm=1,0}; t = MatMul a b; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  const %b: float32[2,4] = {1, 1, 1, 1, 1, 1, 1, 1}\n"
  "  %t__0: float32[3,4] = Gemm(%x, %b) {transA=1}  # t\n"
  "  %y: float32[3,4] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "matmul_trans_b",
  "x = input f32 [2,3]; w = input f32 [4,3]; b = Transpose w {perm=1,0}; t = MatMul x b; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  input %w: float32[4,3]\n"
  "  %t__0: float32[2,4] = Gemm(%x, %w) {transB=1}  # t\n"
  "  %y: float32[2,4] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
{ "mul_reciprocal",
  "x = input f32 [2,3]; w = input f32 [2,3]; r = Sqrt w; q = Reciprocal r; t = Mul q x; y = Relu t; out y",
  "graph t (opset 21) {\n"
  "  input %x: float32[2,3]\n"
  "  input %w: float32[2,3]\n"
  "  %r: float32[2,3] = Sqrt(%w)\n"
  "  %t__0: float32[2,3] = Div(%x, %r)  # t\n"
  "  %y: float32[2,3] = Relu(%t__0)\n"
  "  return %y\n"
  "}\n" },
