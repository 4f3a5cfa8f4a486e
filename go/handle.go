package cuzk

import "sync"

// handle guards one C handle (P is the pointer type: cgo's opaque structs are incomplete
// types, which cannot be type arguments) against Close while calls use it. The library's
// *_free functions demand that no other call use the handle during or after them, while
// every other call may run concurrently: calls hold the read lock for their duration and
// Close takes the write lock, so Close waits for calls in flight, and calls after it fail.
type handle[P comparable] struct {
	mu   sync.RWMutex
	p    P // the zero value once closed
	kind string
}

// acquire returns the live handle, read-locked until release is called, or an error
// after Close.
func (h *handle[P]) acquire() (P, error) {
	var zero P
	h.mu.RLock()
	if h.p == zero {
		h.mu.RUnlock()
		return zero, argError("%s used after Close", h.kind)
	}
	return h.p, nil
}

func (h *handle[P]) release() { h.mu.RUnlock() }

// close frees the handle once, after every call in flight has returned; later calls to
// close do nothing.
func (h *handle[P]) close(free func(P)) {
	var zero P
	h.mu.Lock()
	p := h.p
	h.p = zero
	h.mu.Unlock()
	if p != zero {
		free(p)
	}
}
