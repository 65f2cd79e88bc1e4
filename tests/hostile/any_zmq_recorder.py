# exercise: ch05_multi_head/mean_pool_kv_heads
# attack: the checker's requests recorded through zmq and printed into the student's own feedback
import zmq

_recv = zmq.Socket.recv_multipart
_seen = []


def _recording(self, *args, **kwargs):
    message = _recv(self, *args, **kwargs)
    _seen.append(message)
    return message


zmq.Socket.recv_multipart = _recording


def mean_pool_kv_heads(mha, num_kv_heads):
    print(_seen)
    return mha
