"use strict";
// warp_reduce: simulator code, threads as generators (barriers / warp operations)
const { atomic, bindArray, oob, runThreads } = rt;
const atomic_add_float32_global = atomic("add", "float32", "global");
return function kernel_warp_reduce(L, args) {
  const x = bindArray(args[0], "x", "float32", 1, "C");
  let x$v = x.v, x$n0 = x.shape[0], x$size = x.size;
  const out = bindArray(args[1], "out", "float32", 1, "C");
  let out$v = out.v, out$n0 = out.shape[0], out$size = out.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  runThreads(L, (bx, by, bz) => {
    return function* thread(T, tx, ty, tz) {
      let i, v, d, $0, $1;
      i = ((((Math.imul(bx, nx)) | 0) + tx) | 0);
      v = ((i < x$n0) ? x$v[($0 = i) >>> 0 < x$n0 ? $0 : oob("x", [$0], [x$n0], sites[0], tx, ty, tz, bx, by, bz)] : 0);
      d = 16;
      L_loop: while ((d > 0)) {
        L_loop_body: {
          v = Math.fround(v + (T.op = 3, T.w = 3, T.m = 4294967295, T.v = v, T.l = d, yield));
        }
        d = (d >> 1);
      }
      if ((T.lane === 0)) {
        atomic_add_float32_global(out$v, ($1 = 0) >>> 0 < out$n0 ? $1 : oob("out", [$1], [out$n0], sites[1], tx, ty, tz, bx, by, bz), v);
      }
    };
  });
};
