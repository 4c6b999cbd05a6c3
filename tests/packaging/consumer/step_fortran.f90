! Consumer check in Fortran: the installed module scimesh_step and libscimesh_mpi_fortran.
! Without a lease, scimesh_begin must fail with code 2 (SCIMESH_ERR_NO_LEASE).
program consumer_fortran
  use mpi
  use scimesh_step
  implicit none
  type(scimesh_step_t) :: step
  integer :: ierr, mpierr

  call MPI_Init(mpierr)
  call scimesh_begin(MPI_COMM_WORLD, step, ierr, '/nonexistent/attempt')
  print '(a,i0,3a)', 'fortran: begin -> ', ierr, ' (', scimesh_strerror_f(ierr), ')'
  call MPI_Finalize(mpierr)
  if (ierr /= 2) error stop 1
end program consumer_fortran
