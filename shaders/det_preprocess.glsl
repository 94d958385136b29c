// Detection input: the decoded BGR image resized as cv2.resize INTER_LINEAR (bit-exact with
// ocr_resize_linear), then (v/255 - mean[c]) / std[c] per BGR channel into planar CHW.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer Img { uint img[]; };
layout(std430, binding = 1) readonly buffer Table { uint tab[]; };  // dst_w x-entries, then dst_h y-entries
layout(std430, binding = 2) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint src_w, src_h, margin, fill_word; // the image as image_bytes.glsl reads it
    uint dst_w, dst_h, mode, y_off;
    float mean0, mean1, mean2, std0, std1, std2;
} p;

#include "image_bytes.glsl"
uvec3 pix(uint x, uint y) { return image_bgr(x, y); }
#include "linear_u8.glsl"

void main()
{
    uint x = gl_GlobalInvocationID.x, yy = gl_GlobalInvocationID.y;
    if (x >= p.dst_w || yy >= p.dst_h)
        return;
    uvec3 v;
    if (p.mode == RESIZE_COPY) {
        v = pix(x, yy);
    } else if (p.mode == RESIZE_HALF) {
        v = half_u8(x, yy);
    } else {
        uint ex = 3u * x, ey = 3u * (p.dst_w + yy);
        v = linear_u8(uvec3(tab[ex], tab[ex + 1u], tab[ex + 2u]), uvec3(tab[ey], tab[ey + 1u], tab[ey + 2u]));
    }
    const float scale = 1.0 / 255.0;
    vec3 f = (vec3(v) * scale - vec3(p.mean0, p.mean1, p.mean2)) / vec3(p.std0, p.std1, p.std2);
    uint plane = p.dst_w * p.dst_h, o = p.y_off + yy * p.dst_w + x;
    y[o] = TO_S(f.x);
    y[o + plane] = TO_S(f.y);
    y[o + 2u * plane] = TO_S(f.z);
}
