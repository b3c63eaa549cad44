// Anchors the adapter library: a static library needs one object even while every part of the layer is a header.
namespace xconn::adapter {
int layer_anchor = 0;
}  // namespace xconn::adapter
