! A small step written in Fortran against the scimesh_step module (system test
! program): the same computation as step_c.c.
program step_fortran
  use mpi
  use scimesh_step
  implicit none
  type(scimesh_step_t) :: step
  character(len=:), allocatable :: input
  character(len=256) :: out
  integer :: ierr, rank, nranks, at, end_at
  integer(kind=8) :: terms, i, local, total
  logical :: cancelled

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call scimesh_begin(MPI_COMM_WORLD, step, ierr)
  if (ierr /= SCIMESH_OK) then
    print '(a,i0,2a)', 'rank ', rank, ': begin: ', scimesh_strerror_f(ierr)
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  call scimesh_input(step, input, ierr)
  terms = 1000
  at = index(input, '"terms":')
  if (at > 0) then
    ! The number runs up to the next ',' or '}'.
    end_at = scan(input(at + 8:), ',}') + at + 6
    read (input(at + 8:end_at), *) terms
  end if
  deallocate (input)  ! the caller owns the text (LeakSanitizer checks it)

  local = 0
  do i = rank + 1, terms, nranks
    local = local + i
    call scimesh_cancelled(step, cancelled, ierr)
    if (cancelled) exit
  end do
  call MPI_Reduce(local, total, 1, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call scimesh_progress(step, '{"phase":"reduced"}', ierr)
  if (rank == 0) then
    write (out, '(a,i0,a,i0,a)') '{"sum":', total, ',"ranks":', nranks, ',"language":"fortran"}'
    call scimesh_set_output(step, out, ierr)
    if (ierr /= SCIMESH_OK) call MPI_Abort(MPI_COMM_WORLD, 5, ierr)
  end if
  call scimesh_end(step, ierr)
  call MPI_Finalize(at)
  if (ierr /= SCIMESH_OK) stop 1
end program step_fortran
