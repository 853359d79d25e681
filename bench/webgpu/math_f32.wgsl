// exp(v) + log(v + 1)·sin(v) + cos(v)·tanh(v) per element (bench/gpu.ts `mathF32`), with WGSL's
// built-in functions.
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i < arrayLength(&out)) {
    let v = x[i];
    out[i] = exp(v) + log(v + 1.0) * sin(v) + cos(v) * tanh(v);
  }
}
