package api

// RotateEvery lets the external tests make imports rotate their transaction at every
// batch.
var RotateEvery = &rotateEvery
