module github.com/cuzk/cuzk/go

go 1.22
