module github.com/atmlab/atmlab

go 1.26.8
