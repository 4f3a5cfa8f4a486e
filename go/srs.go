package cuzk

// #include <stdlib.h>
// #include "cuzk.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// SRS is one circuit's params (proving key) with its verifying key, decoded in memory. It
// is immutable and safe for concurrent use, by several engines too. Jobs keep what they
// need of it alive: it may be closed while jobs that use it still run.
type SRS struct {
	h handle[*C.cuzk_srs]
}

// Shape is the shape of the circuit an SRS is for, which every partition must match.
type Shape struct {
	// DomainSize is the evaluation domain size (a power of two); a partition's A, B, C
	// hold more than half of it and at most all of it, in scalars.
	DomainSize int
	// Inputs counts the inputs, the constant ONE included: a partition's Input scalars.
	Inputs int
	// Aux counts the aux variables: a partition's Aux scalars.
	Aux int
	// PublicInputs counts the scalars a proof is verified against (Inputs - 1).
	PublicInputs int
}

func newSRS(p *C.cuzk_srs) *SRS {
	s := &SRS{h: handle[*C.cuzk_srs]{p: p, kind: "SRS"}}
	runtime.SetFinalizer(s, (*SRS).Close)
	return s
}

// LoadSRS reads a .params file (bellperson's Parameters::write layout) through a memory
// map. checked also checks that every point is in its prime-order subgroup: slow, for
// params from an untrusted source; without it each point is checked to be well formed
// and on the curve, enough for params whose digest the caller verified, as Filecoin nodes
// do. The engine is not needed to load params; the method form keeps call sites reading
// as the engine's API.
func (e *Engine) LoadSRS(path string, checked bool) (*SRS, error) {
	return LoadSRS(path, checked)
}

// SRSFromBytes decodes params from the bytes of a .params file; see LoadSRS.
func (e *Engine) SRSFromBytes(data []byte, checked bool) (*SRS, error) {
	return SRSFromBytes(data, checked)
}

// LoadSRS is (*Engine).LoadSRS without an engine.
func LoadSRS(path string, checked bool) (*SRS, error) {
	cpath, err := cString(path, "path")
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	var p *C.cuzk_srs
	if err := call(func() C.cuzk_status { return C.cuzk_srs_load(cpath, C.bool(checked), &p) }); err != nil {
		return nil, err
	}
	return newSRS(p), nil
}

// SRSFromBytes is (*Engine).SRSFromBytes without an engine. data is read only during the
// call.
func SRSFromBytes(data []byte, checked bool) (*SRS, error) {
	var p *C.cuzk_srs
	err := call(func() C.cuzk_status {
		return C.cuzk_srs_from_bytes(bytesPtr(data), C.size_t(len(data)), C.bool(checked), &p)
	})
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return newSRS(p), nil
}

// ptr is the live C handle, guarded against Close until done is called.
func (s *SRS) ptr() (p *C.cuzk_srs, done func(), err error) {
	if s == nil {
		return nil, nil, argError("SRS is nil")
	}
	if p, err = s.h.acquire(); err != nil {
		return nil, nil, err
	}
	return p, s.h.release, nil
}

// Close frees the params; jobs started with them are not affected. Calling Close again
// does nothing.
func (s *SRS) Close() {
	if s == nil {
		return
	}
	runtime.SetFinalizer(s, nil)
	s.h.close(func(p *C.cuzk_srs) { C.cuzk_srs_free(p) })
}

// Shape is the shape of the circuit the params are for.
func (s *SRS) Shape() (Shape, error) {
	p, done, err := s.ptr()
	if err != nil {
		return Shape{}, err
	}
	defer done()
	var cs C.cuzk_circuit_shape
	err = call(func() C.cuzk_status { return C.cuzk_srs_shape(p, &cs) })
	runtime.KeepAlive(s)
	if err != nil {
		return Shape{}, err
	}
	return Shape{
		DomainSize:   int(cs.domain_size),
		Inputs:       int(cs.num_inputs),
		Aux:          int(cs.num_aux),
		PublicInputs: int(cs.num_public_inputs),
	}, nil
}

// VerifyingKey is the params' verifying key in bellperson's VerifyingKey::write layout,
// what Verify takes.
func (s *SRS) VerifyingKey() ([]byte, error) {
	p, done, err := s.ptr()
	if err != nil {
		return nil, err
	}
	defer done()
	defer runtime.KeepAlive(s)
	var needed C.size_t
	err = call(func() C.cuzk_status { return C.cuzk_srs_verifying_key(p, nil, 0, &needed) })
	if !isStatus(err, StatusBufferTooSmall) {
		if err == nil {
			err = &Error{Status: StatusInternal, Message: "cuzk (Go): the size query for the verifying key wrote nothing"}
		}
		return nil, err
	}
	vk := make([]byte, int(needed))
	err = call(func() C.cuzk_status {
		return C.cuzk_srs_verifying_key(p, bytesPtr(vk), C.size_t(len(vk)), &needed)
	})
	if err != nil {
		return nil, err
	}
	return vk[:needed], nil
}

// Verify checks proof against publicInputs (32-byte little-endian scalars, the constant
// ONE not included) with the params' verifying key, prepared once per SRS. A proof that
// does not verify is (false, nil); an error means the arguments themselves are malformed
// (ErrInvalidProof: the proof's bytes do not decode).
func (s *SRS) Verify(proof []byte, publicInputs []byte) (bool, error) {
	p, done, err := s.ptr()
	if err != nil {
		return false, err
	}
	defer done()
	n, err := scalarCount(publicInputs, "publicInputs")
	if err != nil {
		return false, err
	}
	var ok C.bool
	err = call(func() C.cuzk_status {
		return C.cuzk_srs_verify(p, bytesPtr(proof), C.size_t(len(proof)), bytesPtr(publicInputs), n, &ok)
	})
	runtime.KeepAlive(s)
	runtime.KeepAlive(proof)
	runtime.KeepAlive(publicInputs)
	return err == nil && bool(ok), err
}

// Verify checks proof against publicInputs with the verifying key vk (as
// SRS.VerifyingKey returns it); see SRS.Verify, which is cheaper per proof.
func Verify(vk []byte, proof []byte, publicInputs []byte) (bool, error) {
	n, err := scalarCount(publicInputs, "publicInputs")
	if err != nil {
		return false, err
	}
	var ok C.bool
	err = call(func() C.cuzk_status {
		return C.cuzk_verify(bytesPtr(vk), C.size_t(len(vk)), bytesPtr(proof), C.size_t(len(proof)),
			bytesPtr(publicInputs), n, &ok)
	})
	runtime.KeepAlive(vk)
	runtime.KeepAlive(proof)
	runtime.KeepAlive(publicInputs)
	return err == nil && bool(ok), err
}

// scalarCount is the number of 32-byte scalars in b; the C ABI counts scalars, so a
// length that is not a whole number of them cannot be passed on.
func scalarCount(b []byte, arg string) (C.size_t, error) {
	if len(b)%ScalarBytes != 0 {
		return 0, argError("%s holds %d bytes, not a whole number of %d-byte scalars", arg, len(b), ScalarBytes)
	}
	return C.size_t(len(b) / ScalarBytes), nil
}
