! scimesh_step: the Fortran module of libscimesh_mpi (ISO_C_BINDING over scimesh/step.h).
!
! Every procedure returns its status in `ierr` (SCIMESH_OK = 0, else a code
! that scimesh_strerror_f names). begin and end are collective.
module scimesh_step
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: SCIMESH_OK = 0
  integer, parameter, public :: SCIMESH_ERR_TRUNCATED = 5
  integer, parameter, public :: SCIMESH_ERR_LEASE_LOST = 7

  ! The step handle: opaque.
  type, public :: scimesh_step_t
    type(c_ptr) :: handle = c_null_ptr
  end type

  public :: scimesh_begin, scimesh_end, scimesh_input, scimesh_previous, scimesh_cancelled
  public :: scimesh_cancelled_all, scimesh_progress, scimesh_set_output, scimesh_set_state_patch
  public :: scimesh_set_usage, scimesh_add_artifact, scimesh_fail, scimesh_strerror_f

  interface
    integer(c_int) function c_begin_f(comm, dir, step) bind(C, name="scimesh_step_begin_f")
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), value :: dir
      type(c_ptr) :: step
    end function
    integer(c_int) function c_end(step) bind(C, name="scimesh_step_end")
      import :: c_int, c_ptr
      type(c_ptr) :: step
    end function
    integer(c_int) function c_input(step, buf, size, needed) bind(C, name="scimesh_step_input")
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: buf
      integer(c_size_t), value :: size
      integer(c_size_t) :: needed
    end function
    integer(c_int) function c_previous(step, buf, size, needed) bind(C, name="scimesh_step_previous")
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: buf
      integer(c_size_t), value :: size
      integer(c_size_t) :: needed
    end function
    integer(c_int) function c_cancelled(step, flag) bind(C, name="scimesh_step_cancelled")
      import :: c_int, c_ptr
      type(c_ptr), value :: step
      integer(c_int) :: flag
    end function
    integer(c_int) function c_cancelled_all(step, flag) bind(C, name="scimesh_step_cancelled_all")
      import :: c_int, c_ptr
      type(c_ptr), value :: step
      integer(c_int) :: flag
    end function
    integer(c_int) function c_progress(step, json) bind(C, name="scimesh_step_progress")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: json
    end function
    integer(c_int) function c_set_output(step, json) bind(C, name="scimesh_step_set_output")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: json
    end function
    integer(c_int) function c_set_state_patch(step, json) bind(C, name="scimesh_step_set_state_patch")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: json
    end function
    integer(c_int) function c_set_usage(step, json) bind(C, name="scimesh_step_set_usage")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: json
    end function
    integer(c_int) function c_add_artifact(step, name, path, media) bind(C, name="scimesh_step_add_artifact")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: name, path
      type(c_ptr), value :: media
    end function
    integer(c_int) function c_fail(step, cls, message) bind(C, name="scimesh_step_fail")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: step
      character(kind=c_char), dimension(*) :: cls, message
    end function
    type(c_ptr) function c_strerror(code) bind(C, name="scimesh_strerror")
      import :: c_int, c_ptr
      integer(c_int), value :: code
    end function
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function
  end interface

contains

  ! Begins the step on communicator `comm` (collective). `attempt_dir` is optional:
  ! without it, $SCIMESH_ATTEMPT_DIR.
  subroutine scimesh_begin(comm, step, ierr, attempt_dir)
    integer, intent(in) :: comm
    type(scimesh_step_t), intent(out) :: step
    integer, intent(out) :: ierr
    character(len=*), intent(in), optional :: attempt_dir
    character(kind=c_char, len=:), allocatable, target :: dir
    if (present(attempt_dir)) then
      dir = trim(attempt_dir) // c_null_char
      ierr = c_begin_f(int(comm, c_int), c_loc(dir), step%handle)
    else
      ierr = c_begin_f(int(comm, c_int), c_null_ptr, step%handle)
    end if
  end subroutine

  ! Ends the step (collective); ierr = SCIMESH_ERR_LEASE_LOST when the lease was lost.
  subroutine scimesh_end(step, ierr)
    type(scimesh_step_t), intent(inout) :: step
    integer, intent(out) :: ierr
    ierr = c_end(step%handle)
  end subroutine

  ! The rendered input as JSON text, in a string allocated to fit.
  subroutine scimesh_input(step, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierr
    call fetch_text(step, .true., json, ierr)
  end subroutine

  ! The previous steps' outputs as a JSON object text.
  subroutine scimesh_previous(step, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierr
    call fetch_text(step, .false., json, ierr)
  end subroutine

  subroutine fetch_text(step, want_input, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    logical, intent(in) :: want_input
    character(len=:), allocatable, intent(out) :: json
    integer, intent(out) :: ierr
    character(kind=c_char) :: probe(1)
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: needed
    integer :: i
    needed = 0
    if (want_input) then
      ierr = c_input(step%handle, probe, 0_c_size_t, needed)
    else
      ierr = c_previous(step%handle, probe, 0_c_size_t, needed)
    end if
    if (ierr /= SCIMESH_ERR_TRUNCATED .and. ierr /= SCIMESH_OK) return
    allocate (buf(needed))
    if (want_input) then
      ierr = c_input(step%handle, buf, needed, needed)
    else
      ierr = c_previous(step%handle, buf, needed, needed)
    end if
    if (ierr /= SCIMESH_OK) return
    allocate (character(len=int(needed) - 1) :: json)
    do i = 1, int(needed) - 1
      json(i:i) = buf(i)
    end do
  end subroutine

  ! cancelled = .true. once the lease is lost (cheap; poll every iteration).
  subroutine scimesh_cancelled(step, cancelled, ierr)
    type(scimesh_step_t), intent(in) :: step
    logical, intent(out) :: cancelled
    integer, intent(out) :: ierr
    integer(c_int) :: flag
    flag = 0
    ierr = c_cancelled(step%handle, flag)
    cancelled = flag /= 0
  end subroutine

  ! Collective: the same answer on every rank.
  subroutine scimesh_cancelled_all(step, cancelled, ierr)
    type(scimesh_step_t), intent(in) :: step
    logical, intent(out) :: cancelled
    integer, intent(out) :: ierr
    integer(c_int) :: flag
    flag = 0
    ierr = c_cancelled_all(step%handle, flag)
    cancelled = flag /= 0
  end subroutine

  subroutine scimesh_progress(step, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=*), intent(in) :: json
    integer, intent(out) :: ierr
    ierr = c_progress(step%handle, trim(json) // c_null_char)
  end subroutine

  subroutine scimesh_set_output(step, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=*), intent(in) :: json
    integer, intent(out) :: ierr
    ierr = c_set_output(step%handle, trim(json) // c_null_char)
  end subroutine

  subroutine scimesh_set_state_patch(step, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=*), intent(in) :: json
    integer, intent(out) :: ierr
    ierr = c_set_state_patch(step%handle, trim(json) // c_null_char)
  end subroutine

  subroutine scimesh_set_usage(step, json, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=*), intent(in) :: json
    integer, intent(out) :: ierr
    ierr = c_set_usage(step%handle, trim(json) // c_null_char)
  end subroutine

  ! Adds the file `path` as artifact `name`; `media_type` is optional.
  subroutine scimesh_add_artifact(step, name, path, ierr, media_type)
    type(scimesh_step_t), intent(in) :: step
    character(len=*), intent(in) :: name, path
    integer, intent(out) :: ierr
    character(len=*), intent(in), optional :: media_type
    character(kind=c_char, len=:), allocatable, target :: media
    if (present(media_type)) then
      media = trim(media_type) // c_null_char
      ierr = c_add_artifact(step%handle, trim(name) // c_null_char, trim(path) // c_null_char, c_loc(media))
    else
      ierr = c_add_artifact(step%handle, trim(name) // c_null_char, trim(path) // c_null_char, c_null_ptr)
    end if
  end subroutine

  ! The step failed with class `failure_class` ('fatal', 'retryable', ...); any
  ! rank, local. The first failure any rank records wins.
  subroutine scimesh_fail(step, failure_class, message, ierr)
    type(scimesh_step_t), intent(in) :: step
    character(len=*), intent(in) :: failure_class, message
    integer, intent(out) :: ierr
    ierr = c_fail(step%handle, trim(failure_class) // c_null_char, trim(message) // c_null_char)
  end subroutine

  ! The name of an error code.
  function scimesh_strerror_f(code) result(text)
    integer, intent(in) :: code
    character(len=:), allocatable :: text
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_strerror(int(code, c_int))
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function

end module scimesh_step
